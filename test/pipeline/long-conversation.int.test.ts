import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { MessageDto, SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const BUDGET_INPUT = 4000;
const RESERVED = 500;

// `strict`: CHAT_TEMPLATE_COMPAT=strict against a stub that answers 400 like a strict chat template (vLLM, Ollama).
// The two deployments are independent (app, database, Redis prefix, stub) and a turn mostly waits: they run at once.
describe.concurrent.each([{ compat: 'openai' }, { compat: 'strict' }] as const)(
  'a long conversation over REST against an OpenAI-compatible stub ($compat)',
  ({ compat }) => {
    let stub: OpenAIStub;
    let app: TestApp;
    let token: string;

    beforeAll(async () => {
      stub = await startOpenAIStub({
        maxContextTokens: BUDGET_INPUT,
        classifyRequest,
        responder: summaryResponder(),
        strictTemplate: compat === 'strict',
      });
      app = await startTestApp({
        env: {
          OPENAI_BASE_URL: stub.url,
          CHAT_MODEL: 'gpt-4o-mini',
          SUMMARY_TRIGGER: 'tokens=1500',
          SUMMARY_KEEP: 'messages=6',
          SUMMARY_MAX_TOKENS: '300',
          CONTEXT_MAX_INPUT_TOKENS: String(BUDGET_INPUT),
          RESERVED_OUTPUT_TOKENS: String(RESERVED),
          CHAT_TEMPLATE_COMPAT: compat,
        },
      });
      ({ token } = await app.guest());
    });
    afterAll(async () => {
      await app?.stop();
      await stub?.close();
    });

    it('keeps every message in the transcript while the context stays bounded and summarized', async ({ expect }) => {
      const thread = (await (
        await app.api('/api/threads', { method: 'POST', token, json: { title: 'long' } })
      ).json()) as ThreadDto;
      const turns = 64;
      for (let turn = 1; turn <= turns; turn += 1) {
        const content = `Turn ${turn}: please remember CODE-${1000 + turn}. ${'We keep talking about the project plan and its details. '.repeat(4)}`;
        const response = await app.api(`/api/threads/${thread.id}/messages`, {
          method: 'POST',
          token,
          json: { content, clientMessageId: `m-${turn}` },
        });
        expect(response.status).toBe(201);
        const body = (await response.json()) as SendMessageResponseDto;
        expect(body.turn.status).toBe('complete');
        // The stub echoes the newest user turn; in strict templates the per-call parts (recall) join that turn after the
        // user's own text, so the answer starts with the echo of what the user sent.
        expect(body.messages.at(-1)?.content.startsWith(`stub reply to: ${content}`)).toBe(true);
      }

      // Folds run in the background; wait until the window is below the trigger again.
      await waitFor(
        async () => {
          const detail = (await (await app.api(`/api/threads/${thread.id}`, { token })).json()) as {
            context: { foldPending: boolean; revision: number };
          };
          return !detail.context.foldPending && detail.context.revision > 0;
        },
        { timeoutMs: 20_000, what: 'folds to settle' },
      );

      // The full transcript, in order, through the paged history API.
      const all: MessageDto[] = [];
      let before: number | undefined;
      for (;;) {
        const query = before ? `?limit=50&before=${before}` : '?limit=50';
        const page = (await (await app.api(`/api/threads/${thread.id}/messages${query}`, { token })).json()) as {
          messages: MessageDto[];
          hasMoreBefore: boolean;
        };
        all.unshift(...page.messages);
        if (!page.hasMoreBefore) break;
        before = page.messages[0]?.seq ?? undefined;
      }
      expect(all.map((message) => message.seq)).toEqual(Array.from({ length: turns * 2 }, (_, index) => index + 1));
      expect(all.filter((message) => message.role === 'user').map((message) => message.content.slice(0, 20))).toEqual(
        Array.from({ length: turns }, (_, index) => `Turn ${index + 1}: please remem`.slice(0, 20)),
      );
      expect(all.every((message) => message.status === 'complete')).toBe(true);

      // Every request fit the budget and none was rejected; after the first fold, chat requests carry the summary.
      const budget = BUDGET_INPUT - RESERVED;
      expect(stub.requests.length).toBeGreaterThan(turns);
      for (const request of stub.requests) {
        expect(request.rejection).toBeUndefined();
        expect(request.status).toBe(200);
        expect(request.promptTokens).toBeLessThanOrEqual(budget);
      }
      const chats = stub.requests.filter((request) => request.kind === 'chat');
      expect(chats).toHaveLength(turns);
      const last = chats.at(-1);
      const leading = last?.body.messages[0];
      expect(leading?.role).toBe('system');
      expect(JSON.stringify(leading?.content)).toContain('Summary of the conversation so far');
      expect(JSON.stringify(leading?.content)).toContain('CODE-1001');
      // Bounded, not growing with the conversation: every pack fits the budget (above), and over the second half of the
      // chat the packs stay near the trigger on average. (Their maximum depends on how far a window grows while a fold
      // runs off the request path, plus the per-call recall slot: a timing, not a bound.)
      const later = chats.slice(chats.length / 2).map((request) => request.promptTokens);
      expect(later.reduce((sum, tokens) => sum + tokens, 0) / later.length).toBeLessThan(2 * 1500);

      // Fold revisions cover contiguous seq ranges, with no gap and no overlap.
      const client = new pg.Client({ connectionString: app.databaseUrl });
      await client.connect();
      const { rows } = await client.query<{ revision: number; from_seq: number; through_seq: number; author: string }>(
        'SELECT revision, from_seq, through_seq, author FROM summary_revisions WHERE thread_id = $1 ORDER BY revision',
        [thread.id],
      );
      await client.end();
      expect(rows.length).toBeGreaterThan(2);
      expect(rows[0]?.from_seq).toBe(1);
      rows.forEach((row, index) => {
        expect(row.author).toBe('fold');
        expect(row.revision).toBe(index + 1);
        if (index > 0) expect(row.from_seq).toBe((rows[index - 1]?.through_seq ?? 0) + 1);
        expect(row.through_seq).toBeGreaterThanOrEqual(row.from_seq);
      });
    }, 180_000); // 64 sequential turns and their folds: minutes on a loaded machine
  },
);
