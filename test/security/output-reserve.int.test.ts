import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerInfoDto, ThreadDto } from '../../src/shared/api';
import { startOpenAIStub, type OpenAIStub, type StubRequestBody } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { startTestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/** One chat turn through a server configured with `env`: the chat request the endpoint received, and /api/info. */
async function chatRequestOf(
  stub: OpenAIStub,
  env: Record<string, string>,
): Promise<{ body: StubRequestBody & Record<string, unknown>; info: ServerInfoDto }> {
  stub.reset();
  const app = await startTestApp({ env: { OPENAI_BASE_URL: stub.url, OPENAI_API_KEY: 'sk-test', ...env } });
  try {
    const { token } = await app.guest();
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    const sent = await app.api(`/api/threads/${thread.id}/messages`, {
      method: 'POST',
      token,
      json: { content: 'How long may your answer be?' },
    });
    expect(sent.status).toBe(201);
    const info = (await (await app.api('/api/info')).json()) as ServerInfoDto;
    const chat = stub.requests.find((request) => request.kind === 'chat');
    if (!chat) throw new Error('no chat request reached the endpoint');
    return { body: chat.body as StubRequestBody & Record<string, unknown>, info };
  } finally {
    await app.stop();
  }
}

describe('output cap of chat calls', () => {
  let stub: OpenAIStub;
  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest, responder: summaryResponder() });
  });
  afterAll(async () => {
    await stub?.close();
  });

  it('sends the output reserve as max_tokens to a chat model', async () => {
    const { body, info } = await chatRequestOf(stub, { CHAT_MODEL: 'gpt-4o-mini' });
    expect(body.max_tokens).toBe(4096);
    expect(body).not.toHaveProperty('max_completion_tokens');
    expect(info.budget).toBe(128_000 - 4096);
    // An explicit reserve is what is sent.
    expect(
      (await chatRequestOf(stub, { CHAT_MODEL: 'gpt-4o-mini', RESERVED_OUTPUT_TOKENS: '700' })).body.max_tokens,
    ).toBe(700);
  }, 120_000);

  it('sends a reasoning model a reserve with room for reasoning and an answer, as max_completion_tokens', async () => {
    for (const model of ['o3', 'gpt-5-mini', 'openai/o4-mini']) {
      const { body, info } = await chatRequestOf(stub, { CHAT_MODEL: model });
      expect({
        model,
        max_completion_tokens: body.max_completion_tokens,
        max_tokens: body.max_tokens,
        temperature: body.temperature,
      }).toEqual({ model, max_completion_tokens: 25_000, max_tokens: undefined, temperature: undefined });
      expect(info.budget).toBe((model === 'gpt-5-mini' ? 272_000 : 200_000) - 25_000);
    }
  }, 180_000);

  it('sends summarizer calls an output cap: twice the longer of SUMMARY_MAX_TOKENS and TOOL_RESULT_INLINE_TOKENS', async () => {
    stub.reset();
    const app = await startTestApp({
      env: {
        OPENAI_BASE_URL: stub.url,
        OPENAI_API_KEY: 'sk-test',
        CHAT_MODEL: 'gpt-4o-mini',
        SUMMARY_TRIGGER: 'messages=4',
        SUMMARY_KEEP: 'messages=2',
        SUMMARY_MAX_TOKENS: '300',
        TOOL_RESULT_INLINE_TOKENS: '200',
      },
    });
    try {
      const { token } = await app.guest();
      const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
      for (const content of ['CODE-1 first.', 'CODE-2 second.', 'CODE-3 third.']) {
        expect(
          (await app.api(`/api/threads/${thread.id}/messages`, { method: 'POST', token, json: { content } })).status,
        ).toBe(201);
      }
      await waitFor(() => stub.requests.some((request) => request.kind === 'summary'), {
        timeoutMs: 30_000,
        what: 'a summarizer call',
      });
      const summary = stub.requests.find((request) => request.kind === 'summary')?.body as Record<string, unknown>;
      expect(summary.max_tokens).toBe(600);
    } finally {
      await app.stop();
    }
  }, 120_000);
});
