import { describe, it } from 'vitest';
import type { SendMessageResponseDto, ServerInfoDto, ThreadDto } from '../../src/shared/api';
import { startOpenAIStub } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { startTestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const TURNS = 60;

/**
 * A deployment sets only its model's window (as the README tells Ollama users) and starts with working defaults:
 * a 60-turn conversation folds, and no request, chat or summarizer, is ever over the window.
 */
describe('windows from 2k to 1M tokens start on derived defaults', () => {
  // The six deployments are independent (each its own app, database, Redis prefix and stub) and a turn mostly waits
  // on the app, Postgres and Redis: they run at the same time.
  it.concurrent.for([2048, 4096, 8192, 32_768, 128_000, 1_000_000])(
    'carries a %i-token window through a folded 60-turn conversation',
    { timeout: 240_000 },
    async (window, { expect }) => {
      const stub = await startOpenAIStub({ classifyRequest, responder: summaryResponder(), maxContextTokens: window });
      const app = await startTestApp({
        env: { OPENAI_BASE_URL: stub.url, CHAT_MODEL: 'llama3.1:8b', CONTEXT_MAX_INPUT_TOKENS: String(window) },
      });
      try {
        const { token } = await app.guest();
        const info = (await (await app.api('/api/info')).json()) as ServerInfoDto;
        expect(info.contextWindow).toBe(window);
        const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
        for (let turn = 1; turn <= TURNS; turn += 1) {
          const content = `Turn ${turn}: please remember CODE-${1000 + turn}. ${'We keep talking about the project plan, its budget and its many details. '.repeat(3)}`;
          const response = await app.api(`/api/threads/${thread.id}/messages`, {
            method: 'POST',
            token,
            json: { content },
          });
          expect(response.status).toBe(201);
          const body = (await response.json()) as SendMessageResponseDto;
          expect(body.turn.status).toBe('complete');
        }
        await waitFor(
          async () => {
            const detail = (await (await app.api(`/api/threads/${thread.id}`, { token })).json()) as {
              context: { foldPending: boolean; revision: number };
            };
            return !detail.context.foldPending && detail.context.revision > 0;
          },
          { timeoutMs: 60_000, what: 'folds to settle' },
        );

        const chats = stub.requests.filter((request) => request.kind === 'chat');
        const summaries = stub.requests.filter((request) => request.kind === 'summary');
        expect(chats).toHaveLength(TURNS);
        expect(summaries.length).toBeGreaterThan(0);
        for (const request of stub.requests) {
          expect(
            request.rejection,
            `request ${request.index} (${request.kind}) over the ${window}-token window`,
          ).toBeUndefined();
          expect(request.promptTokens).toBeLessThanOrEqual(info.budget);
        }
        // The last answer's pack carried the summary of what was folded.
        expect(JSON.stringify(chats.at(-1)?.body.messages[0]?.content)).toContain('Summary of the conversation so far');
      } finally {
        await app.stop();
        await stub.close();
      }
    },
  );
});
