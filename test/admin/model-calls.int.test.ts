import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelCallPointDto, SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const ADMIN_TOKEN = 'test-admin-token-0123456789';

describe('GET /api/admin/threads/:id/model-calls (the admin tokens chart)', () => {
  let stub: OpenAIStub;
  let app: TestApp;

  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest, responder: summaryResponder() });
    // Folding alone (no auto-recall slot): the chart's prompt line shows what folds save.
    app = await startTestApp({ env: { OPENAI_BASE_URL: stub.url, SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2', RECALL_TOKENS: '0' } });
  });
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
  });

  it('lists each model call with its prompt tokens against the transcript so far, for admins only', async () => {
    const { token } = await app.guest();
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    for (let turn = 1; turn <= 10; turn += 1) {
      const response = await app.api(`/api/threads/${thread.id}/messages`, { method: 'POST', token, json: { content: `Turn ${turn}: ${'a steady stream of words about the plan. '.repeat(10)}` } });
      expect(((await response.json()) as SendMessageResponseDto).turn.status).toBe('complete');
    }
    const path = `/api/admin/threads/${thread.id}/model-calls`;
    expect((await app.api(path)).status).toBe(401);
    expect((await app.api(path, { token })).status).toBe(401);

    let calls: ModelCallPointDto[] = [];
    await waitFor(async () => {
      calls = ((await (await app.api(path, { token: ADMIN_TOKEN })).json()) as { calls: ModelCallPointDto[] }).calls;
      return calls.some((call) => call.purpose === 'summary');
    }, { timeoutMs: 20_000, what: 'a summary call' });

    const chat = calls.filter((call) => call.purpose === 'chat');
    expect(chat).toHaveLength(10);
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
  });
});
