import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelCallListDto, ModelCallPointDto, SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import { lastUserText, replyWithText, startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { waitForIdleSummaryQueue } from '../memory/memory-test-kit';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const ADMIN_TOKEN = 'test-admin-token-0123456789';

describe('GET /api/admin/threads/:id/model-calls (the admin tokens chart)', () => {
  let stub: OpenAIStub;
  let app: TestApp;

  // Every fourth answer comes from a server that reports no usage: the chart falls back to our estimate there.
  let unreported = new Set<number>();
  beforeAll(async () => {
    stub = await startOpenAIStub({
      classifyRequest,
      responder: summaryResponder({
        chat: (request) => {
          const turn = Number(/^Turn (\d+):/.exec(lastUserText(request.body))?.[1] ?? 0);
          return replyWithText(`noted ${turn}`, unreported.has(turn) ? { omitUsage: true } : {});
        },
      }),
    });
    // Folding alone (no auto-recall slot): the chart's prompt line shows what folds save.
    app = await startTestApp({
      env: { OPENAI_BASE_URL: stub.url, SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2', RECALL_TOKENS: '0' },
    });
  });
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
  });

  it('lists each model call with its prompt tokens against the transcript so far, for admins only', async () => {
    unreported = new Set([4, 8]);
    const { token } = await app.guest();
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    const send = async (turn: number) => {
      const response = await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        json: { content: `Turn ${turn}: ${'a steady stream of words about the plan. '.repeat(20)}` },
      });
      expect(((await response.json()) as SendMessageResponseDto).turn.status).toBe('complete');
    };
    for (let turn = 1; turn <= 10; turn += 1) await send(turn);
    const path = `/api/admin/threads/${thread.id}/model-calls`;
    expect((await app.api(path)).status).toBe(401);
    expect((await app.api(path, { token })).status).toBe(401);

    let calls: ModelCallPointDto[] = [];
    await waitFor(
      async () => {
        calls = ((await (await app.api(path, { token: ADMIN_TOKEN })).json()) as ModelCallListDto).calls;
        return calls.some((call) => call.purpose === 'summary');
      },
      { timeoutMs: 20_000, what: 'a summary call' },
    );
    // One more answer once the folds are done (however slow the machine): its prompt stands for a folded transcript.
    await waitForIdleSummaryQueue(app);
    await send(11);
    await waitForIdleSummaryQueue(app);
    calls = ((await (await app.api(path, { token: ADMIN_TOKEN })).json()) as ModelCallListDto).calls;

    // The provider's figure where it reported one (the stub's own count of the request), ours, marked, where not.
    const chatRequests = stub.requests.filter((request) => request.kind === 'chat');
    const chatCalls = calls.filter((call) => call.purpose === 'chat');
    expect(chatCalls.map((call) => call.promptTokensSource)).toEqual(
      chatRequests.map((_, index) => (unreported.has(index + 1) ? 'estimate' : 'provider')),
    );
    chatCalls.forEach((call, index) => {
      expect(call.promptTokens).toBe(
        call.promptTokensSource === 'provider' ? chatRequests[index]!.promptTokens : call.estimatedPromptTokens,
      );
      expect(call.messageId).toEqual(expect.any(String));
    });

    const chat = calls.filter((call) => call.purpose === 'chat');
    expect(chat).toHaveLength(11);
    // The first answer saw only the first message; each later one saw a longer transcript.
    expect(chat[0]).toMatchObject({ throughSeq: 1, model: 'gpt-4o-mini' });
    for (let index = 1; index < chat.length; index += 1) {
      expect(chat[index]!.transcriptTokens).toBeGreaterThan(chat[index - 1]!.transcriptTokens);
      expect(chat[index]!.throughSeq).toBe(chat[index - 1]!.throughSeq + 2);
    }
    // Folding keeps the prompt well below the transcript it stands for.
    const last = chat.at(-1)!;
    expect(last.promptTokens).toBeLessThan(last.transcriptTokens * 0.6);
    expect(calls.map((call) => call.at)).toEqual([...calls.map((call) => call.at)].sort());

    // Paging: the newest calls first, then older pages by cursor, none twice, none missing.
    const pages: ModelCallListDto[] = [];
    let before: string | null = null;
    do {
      const response = await app.api(`${path}?limit=4${before ? `&before=${encodeURIComponent(before)}` : ''}`, {
        token: ADMIN_TOKEN,
      });
      expect(response.status).toBe(200);
      const page = (await response.json()) as ModelCallListDto;
      pages.push(page);
      before = page.nextCursor;
    } while (before && pages.length < 20);
    expect(pages[0]!.calls.map((call) => call.id)).toEqual(calls.slice(-4).map((call) => call.id));
    expect(pages.reverse().flatMap((page) => page.calls.map((call) => call.id))).toEqual(calls.map((call) => call.id));
    expect((await app.api(`${path}?limit=0`, { token: ADMIN_TOKEN })).status).toBe(400);
  });

  it('answers a malformed cursor 400, not 500: a 36-character id that is not a uuid, and garbage', async () => {
    const { token } = await app.guest();
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    const cursors = [
      Buffer.from(`${new Date().toISOString()}|${'-'.repeat(36)}`).toString('base64url'),
      Buffer.from(`${new Date().toISOString()}|zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz`).toString('base64url'),
      'not-a-cursor',
    ];
    for (const cursor of cursors) {
      const response = await app.api(`/api/admin/threads/${thread.id}/model-calls?before=${cursor}`, {
        token: ADMIN_TOKEN,
      });
      expect(response.status, cursor).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: 'VALIDATION' } });
    }
  });

  it('shows the newest calls of a thread with more calls than one page, not the oldest', async () => {
    unreported = new Set();
    const { token } = await app.guest();
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    for (let turn = 1; turn <= 3; turn += 1)
      await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        json: { content: `Turn ${turn}: hello` },
      });
    const page = (await (
      await app.api(`/api/admin/threads/${thread.id}/model-calls?limit=2`, { token: ADMIN_TOKEN })
    ).json()) as ModelCallListDto;
    const chat = page.calls.filter((call) => call.purpose === 'chat');
    expect(chat.map((call) => call.throughSeq)).toEqual([3, 5]);
    expect(page.nextCursor).not.toBeNull();
  });
});
