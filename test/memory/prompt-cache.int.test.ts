import { describe, expect, it } from 'vitest';
import { promptCacheKeyOf } from '../../src/llm/model-ports';
import type { MessageContextDto, ModelCallListDto } from '../../src/shared/api';
import { replyWithText } from '../support/openai-stub';
import { useChatServer } from '../support/chat-server';
import { startTestApp } from '../support/test-app';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import { FOLD_TASK_OPENING } from '../../src/core/summary/continued-fold-prompt';
import { adminToken, memoryKit } from './memory-test-kit';

const METRICS_TOKEN = 'prompt-cache-metrics-token-0123456789';
// A system prompt above OpenAI's 1,024-token minimum, so every call's prompt can be cached.
const SYSTEM_PROMPT = `You are the assistant of the prompt cache suite. ${Array.from({ length: 700 }, (_, index) => `rule${index}`).join(' ')}`;

describe("prompt caching: prompt_cache_key, the provider's cached tokens and where a prompt first differed", () => {
  const server = useChatServer({
    stub: { promptCache: true, responder: () => replyWithText('noted') },
    env: { SYSTEM_PROMPT, PROMPT_CACHE_KEY: 'on', RECALL_TOKENS: '0', METRICS_TOKEN },
  });
  const kit = memoryKit(server);
  const chats = () => server.stub.requests.filter((request) => request.kind === 'chat');

  it('records the reported cached tokens and the first difference per answer, shows them per reply and to admins, and counts them', async () => {
    const thread = await kit.createThread();
    const before = chats().length;
    await kit.send(thread.id, 'First message.');
    await kit.send(thread.id, 'Second message.');
    const third = await kit.send(thread.id, 'Third message.');
    const requests = chats().slice(before);
    expect(requests).toHaveLength(3);
    // One key per thread, a hash of its id (never the id itself).
    expect(new Set(requests.map((request) => request.body.prompt_cache_key))).toEqual(
      new Set([promptCacheKeyOf(thread.id)]),
    );
    expect(JSON.stringify(requests[0]?.body)).not.toContain(thread.id);
    // The stub served each later prompt's whole previous prompt from its cache (in 128-token steps).
    expect(requests[0]?.cachedTokens).toBe(0);
    expect(requests[2]?.cachedTokens).toBeGreaterThanOrEqual(1024);
    expect(requests[2]!.cachedTokens! % 128).toBe(0);

    const response = await server.app.api(`/api/threads/${thread.id}/messages/${third.messages.at(-1)!.id}/context`, {
      token: server.token,
    });
    const view = (await response.json()) as MessageContextDto;
    expect(view.reportedCachedTokens).toBe(requests[2]?.cachedTokens);
    // The previous prompt [system, user, assistant, user] is a prefix of this one: the first difference is at 4.
    expect(view.promptDivergence?.messageIndex).toBe(4);
    expect(view.promptDivergence?.tokensBefore).toBeGreaterThan(1024);
    expect(view.promptDivergence!.tokensBefore).toBeLessThan(view.estimatedPromptTokens);

    const admin = await adminToken(server.app);
    const list = (await (
      await server.app.api(`/api/admin/threads/${thread.id}/model-calls`, { token: admin })
    ).json()) as ModelCallListDto;
    expect(list.calls.filter((call) => call.purpose === 'chat').map((call) => call.reportedCachedTokens)).toEqual(
      requests.map((request) => request.cachedTokens),
    );

    const metrics = await (await server.app.api('/metrics', { token: METRICS_TOKEN })).text();
    const counted = /chat_model_cached_prompt_tokens_total\{model="[^"]+",purpose="chat"\} (\d+)/.exec(metrics);
    expect(Number(counted?.[1])).toBeGreaterThanOrEqual(
      requests.reduce((sum, request) => sum + (request.cachedTokens ?? 0), 0),
    );
  });

  it('marks the first difference when the previous call was made by another server process', async () => {
    const thread = await kit.createThread();
    await kit.send(thread.id, 'First message.');
    await kit.send(thread.id, 'Second message.');
    // A second process of the same deployment (same database, Redis prefix and auth secret) answers the third.
    const other = await startTestApp({
      database: { url: server.app.databaseUrl },
      authSecret: server.app.authSecret,
      env: {
        OPENAI_BASE_URL: server.stub.url,
        SYSTEM_PROMPT,
        PROMPT_CACHE_KEY: 'on',
        RECALL_TOKENS: '0',
        REDIS_PREFIX: server.app.prefix,
      },
    });
    try {
      const third = await memoryKit(other, server.token).send(thread.id, 'Third message.');
      const response = await other.api(`/api/threads/${thread.id}/messages/${third.messages.at(-1)!.id}/context`, {
        token: server.token,
      });
      const view = (await response.json()) as MessageContextDto;
      // The stored fingerprints of the second call: [system, user, assistant, user] is a prefix of this prompt.
      expect(view.promptDivergence?.messageIndex).toBe(4);
      expect(view.promptDivergence?.tokensBefore).toBeGreaterThan(1024);
    } finally {
      await other.application.stop(1000);
    }
  });
});

describe("a fold continues the chat prompt (FOLD_PROMPT=auto), so the provider serves it from the chat calls' cache", () => {
  const server = useChatServer({
    stub: { promptCache: true, classifyRequest, responder: summaryResponder({ chat: () => replyWithText('noted') }) },
    env: {
      SYSTEM_PROMPT,
      PROMPT_CACHE_KEY: 'on',
      RECALL_TOKENS: '0',
      SUMMARY_TRIGGER: 'messages=8',
      SUMMARY_KEEP: 'messages=2',
    },
  });
  const kit = memoryKit(server);

  it('sends the last chat prompt through its newest answer with the same tools (tool_choice none) and key, then the task', async () => {
    const thread = await kit.createThread();
    for (let turn = 1; turn <= 4; turn += 1) await kit.send(thread.id, `Turn ${turn}: CODE-${700 + turn} is noted.`);
    await kit.waitForFoldThrough(thread.id, 6);
    const fold = server.stub.requests.find((request) => request.kind === 'summary');
    const lastChat = server.stub.requests
      .filter((request) => request.kind === 'chat' && request.body.prompt_cache_key === promptCacheKeyOf(thread.id))
      .at(-1);
    expect(fold?.body.tools).toEqual(lastChat?.body.tools);
    expect(fold?.body.tools?.length).toBeGreaterThan(0);
    expect(fold?.body.tool_choice).toBe('none');
    expect(fold?.body.prompt_cache_key).toBe(promptCacheKeyOf(thread.id));
    // [system, user #1 … assistant #8, task]: the last chat prompt [system, #1 … #7] and its answer #8, then the task.
    const messages = fold?.body.messages ?? [];
    expect(messages.slice(0, -2)).toEqual(lastChat?.body.messages);
    expect(wireContentText(messages.at(-2)?.content ?? '')).toBe('noted');
    const task = wireContentText(messages.at(-1)?.content ?? '');
    expect(task.startsWith(FOLD_TASK_OPENING)).toBe(true);
    expect(task).toContain('The messages to fold (#1 to #6)');
    // The whole last chat prompt came from the cache (in 128-token steps): only the answer and the task are new.
    expect(fold?.cachedTokens).toBe(Math.floor((lastChat?.promptTokens ?? 0) / 128) * 128);
    // The segment holds the folded messages' identifiers, not the kept ones'.
    const summary = (await kit.context(thread.id)).summary?.text;
    expect(summary).toContain('CODE-703');
    expect(summary).not.toContain('CODE-704');
  });
});
