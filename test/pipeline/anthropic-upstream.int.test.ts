import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FOLD_TASK_OPENING } from '../../src/core/summary/continued-fold-prompt';
import type { CostReportDto } from '../../src/shared/admin-api';
import type { MessageContextDto, ModelCallListDto } from '../../src/shared/api';
import {
  anthropicEcho,
  anthropicError,
  anthropicText,
  anthropicToolUse,
  lastUserTextOf,
  startAnthropicStub,
  type AnthropicResponder,
  type AnthropicStub,
  type AnthropicStubRequest,
} from '../support/anthropic-messages-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { adminToken, memoryKit } from '../memory/memory-test-kit';

// A system prompt above Anthropic's 1,024-token minimum, so the stable head is cached from the first call.
const SYSTEM_PROMPT = `You are the assistant of the Claude upstream suite. ${Array.from({ length: 900 }, (_, index) => `rule${index}`).join(' ')}`;
const MODEL = 'claude-sonnet-4-5';
const PRICES = JSON.stringify({ [MODEL]: { input: 3, cachedInput: 0.3, output: 15 } });

type Block = { type: string; cache_control?: unknown; [key: string]: unknown };
const blocksOf = (content: unknown): Block[] => (Array.isArray(content) ? (content as Block[]) : []);
/** The summarizer asks for temperature 0; chat calls send none. */
const isChat = (request: AnthropicStubRequest) => request.body.temperature === undefined;

/** Where a request's cache_control marks are. */
function breakpoints(request: AnthropicStubRequest): string[] {
  const body = request.body;
  return [
    ...(body.tools ?? []).flatMap((tool, index) => (tool.cache_control ? [`tools[${index}]`] : [])),
    ...blocksOf(body.system).flatMap((block, index) => (block.cache_control ? [`system[${index}]`] : [])),
    ...body.messages.flatMap((message, index) =>
      blocksOf(message.content).flatMap((block, position) =>
        block.cache_control ? [`messages[${index}][${position}]`] : [],
      ),
    ),
  ];
}

/** Starts a Messages stub and the app with CHAT_PROVIDER=anthropic against it. */
function useClaudeServer(env: Record<string, string>, responder: AnthropicResponder) {
  const state: { stub?: AnthropicStub; app?: TestApp; token?: string } = {};
  beforeAll(async () => {
    state.stub = await startAnthropicStub({ responder });
    state.app = await startTestApp({
      env: {
        CHAT_PROVIDER: 'anthropic',
        ANTHROPIC_BASE_URL: state.stub.url,
        CHAT_MODEL: MODEL,
        SYSTEM_PROMPT,
        RECALL_TOKENS: '0',
        MODEL_PRICES: PRICES,
        ...env,
      },
    });
    state.token = (await state.app.guest()).token;
  });
  afterAll(async () => {
    await state.app?.stop();
    await state.stub?.close();
  });
  return {
    get stub() {
      return state.stub!;
    },
    get app() {
      return state.app!;
    },
    get token() {
      return state.token!;
    },
  };
}

/** Replies by what the user's newest text asks for: a tool round with thinking, an overload, an overflow. */
function scriptedResponder(): AnthropicResponder {
  const failedOnce = new Set<string>();
  return (request) => {
    const asked = lastUserTextOf(request.body);
    const lastMessage = request.body.messages.at(-1);
    const answersTool = blocksOf(lastMessage?.content).some((block) => block.type === 'tool_result');
    if (asked.startsWith('LOOKUP') && !answersTool)
      return anthropicToolUse([{ name: 'search_transcript', input: { query: 'first' } }], {
        thinking: { thinking: 'The user wants an earlier message: search.', signature: 'sig-lookup-1' },
      });
    if (asked.startsWith('LOOKUP')) return anthropicText('Found it.');
    if ((asked.startsWith('OVERLOAD') || asked.startsWith('TOO-LONG')) && !failedOnce.has(asked)) {
      failedOnce.add(asked);
      return asked.startsWith('OVERLOAD')
        ? anthropicError(529, 'overloaded_error', { message: 'Overloaded' })
        : anthropicError(400, 'invalid_request_error', {
            message: 'prompt is too long: 214318 tokens > 200000 maximum',
          });
    }
    return anthropicEcho(request);
  };
}

describe('Claude as the upstream (CHAT_PROVIDER=anthropic) against a Messages API stub with its cache emulated', () => {
  const server = useClaudeServer({ ANTHROPIC_THINKING_BUDGET_TOKENS: '1024' }, scriptedResponder());
  const kit = memoryKit({
    get app() {
      return server.app;
    },
    get token() {
      return server.token;
    },
  });
  const chatsOf = (from: number) => server.stub.requests.slice(from).filter(isChat);

  it('marks the stable head, the newest window message and the tools, and the next call reads what the first wrote', async () => {
    const thread = await kit.createThread();
    const from = server.stub.requests.length;
    await kit.send(thread.id, 'First message.');
    const second = await kit.send(thread.id, 'Second message.');
    const [first, next] = chatsOf(from);
    expect(first && next).toBeTruthy();
    expect(first!.body.max_tokens).toBeGreaterThan(1024);
    expect(blocksOf(first!.body.system)[0]?.text).toContain('You are the assistant of the Claude upstream suite.');
    const toolCount = first!.body.tools?.length ?? 0;
    expect(toolCount).toBeGreaterThan(0);
    // Tools (last one), system, the newest user's own text: three breakpoints.
    expect(breakpoints(first!)).toEqual([`tools[${toolCount - 1}]`, 'system[0]', 'messages[0][0]']);
    expect(breakpoints(next!)).toEqual([`tools[${toolCount - 1}]`, 'system[0]', 'messages[2][0]']);
    expect(blocksOf(next!.body.messages[2]?.content)[0]).toMatchObject({ type: 'text', text: 'Second message.' });
    // The first call wrote its whole prompt; the second read it and wrote its own new part.
    expect(first!.usage!.cache_read_input_tokens).toBe(0);
    expect(first!.usage!.cache_creation_input_tokens).toBeGreaterThan(1024);
    expect(next!.usage!.cache_read_input_tokens).toBe(first!.usage!.cache_creation_input_tokens);

    const answer = second.messages.at(-1)!;
    const view = (await (
      await server.app.api(`/api/threads/${thread.id}/messages/${answer.id}/context`, { token: server.token })
    ).json()) as MessageContextDto;
    const usage = next!.usage!;
    expect(view).toMatchObject({
      model: MODEL,
      reportedPromptTokens: usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens,
      reportedCachedTokens: usage.cache_read_input_tokens,
      reportedCacheWriteTokens: usage.cache_creation_input_tokens,
    });

    const admin = await adminToken(server.app);
    const list = (await (
      await server.app.api(`/api/admin/threads/${thread.id}/model-calls`, { token: admin })
    ).json()) as ModelCallListDto;
    expect(list.calls.map((call) => [call.reportedCachedTokens, call.reportedCacheWriteTokens])).toEqual([
      [0, first!.usage!.cache_creation_input_tokens],
      [usage.cache_read_input_tokens, usage.cache_creation_input_tokens],
    ]);
    const costs = (await (
      await server.app.api('/api/admin/costs?by=thread&days=1', { token: admin })
    ).json()) as CostReportDto;
    const row = costs.rows.find((entry) => entry.key === thread.id)!;
    const reads = first!.usage!.cache_read_input_tokens + usage.cache_read_input_tokens;
    const writes = first!.usage!.cache_creation_input_tokens + usage.cache_creation_input_tokens;
    expect(row).toMatchObject({ calls: 2, cachedTokens: reads, cacheWriteTokens: writes });
    // Writes at 1.25x the input price (3.75), reads at 0.3, the rest at 3, output at 15 (per million).
    const uncached = row.promptTokens - reads - writes;
    expect(row.cost).toBeCloseTo(
      (uncached * 3 + reads * 0.3 + writes * 3.75 + row.completionTokens * 15) / 1_000_000,
      9,
    );
  });

  it("keeps tool calls and results in pairs and sends the loop's thinking back with its signature, dropped next turn", async () => {
    const thread = await kit.createThread();
    const from = server.stub.requests.length;
    const sent = await kit.send(thread.id, 'LOOKUP the first message');
    expect(sent.messages.at(-1)?.content).toBe('Found it.');
    const [call, round] = chatsOf(from);
    expect(call!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(round!.rejection).toBeUndefined();
    const assistant = round!.body.messages.at(-2)!;
    const results = round!.body.messages.at(-1)!;
    const toolUse = blocksOf(assistant.content).find((block) => block.type === 'tool_use')!;
    expect(blocksOf(assistant.content)[0]).toEqual({
      type: 'thinking',
      thinking: 'The user wants an earlier message: search.',
      signature: 'sig-lookup-1',
    });
    expect(blocksOf(results.content)[0]).toMatchObject({ type: 'tool_result', tool_use_id: toolUse.id });
    expect(round!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });

    const later = server.stub.requests.length;
    await kit.send(thread.id, 'Thanks.');
    const nextTurn = chatsOf(later)[0]!;
    const earlier = nextTurn.body.messages.find((message) =>
      blocksOf(message.content).some((block) => block.type === 'tool_use'),
    )!;
    expect(blocksOf(earlier.content).map((block) => block.type)).toEqual(['tool_use']);
    expect(nextTurn.rejection).toBeUndefined();
  });

  it('retries an overloaded (529) call before the first token', async () => {
    const thread = await kit.createThread();
    const from = server.stub.requests.length;
    const sent = await kit.send(thread.id, 'OVERLOAD then answer');
    expect(sent.messages.at(-1)?.content).toBe('stub reply to: OVERLOAD then answer');
    expect(chatsOf(from).map((request) => request.rejection?.status ?? 200)).toEqual([529, 200]);
  });

  it('takes the overflow path on "prompt is too long": folds and sends again once', async () => {
    const thread = await kit.createThread();
    const from = server.stub.requests.length;
    const sent = await kit.send(thread.id, 'TOO-LONG then answer');
    expect(sent.messages.at(-1)?.content).toBe('stub reply to: TOO-LONG then answer');
    expect(chatsOf(from).map((request) => request.rejection?.status ?? 200)).toEqual([400, 200]);
    const view = (await (
      await server.app.api(`/api/threads/${thread.id}/messages/${sent.messages.at(-1)!.id}/context`, {
        token: server.token,
      })
    ).json()) as MessageContextDto;
    expect(view.overflowRetry).toBe(true);
  });
});

describe('a continued fold (FOLD_PROMPT=auto) to Claude sends the chat blocks with the same breakpoints', () => {
  const server = useClaudeServer({ SUMMARY_TRIGGER: 'messages=8', SUMMARY_KEEP: 'messages=2' }, (request) =>
    lastUserTextOf(request.body).startsWith(FOLD_TASK_OPENING)
      ? anthropicText('- The user noted the codes CODE-701 to CODE-704 [#1-#8].')
      : anthropicText('noted'),
  );
  const kit = memoryKit({
    get app() {
      return server.app;
    },
    get token() {
      return server.token;
    },
  });

  it("reads the chat calls' cache", async () => {
    const thread = await kit.createThread();
    for (let turn = 1; turn <= 4; turn += 1) await kit.send(thread.id, `Turn ${turn}: CODE-${700 + turn} is noted.`);
    await kit.waitForFoldThrough(thread.id, 6);
    const fold = server.stub.requests.find((request) => !isChat(request))!;
    const lastChat = server.stub.requests.filter(isChat).at(-1)!;
    expect(lastUserTextOf(fold.body)).toContain(FOLD_TASK_OPENING);
    expect(fold.body.tools).toEqual(lastChat.body.tools);
    expect(fold.body.tool_choice).toEqual({ type: 'none' });
    expect(fold.body.system).toEqual(lastChat.body.system);
    const toolCount = fold.body.tools!.length;
    // The chat's head and tools, and the newest transcript message (the last answer) before the task's own message.
    const newest = fold.body.messages.length - 2;
    expect(breakpoints(fold)).toEqual([`tools[${toolCount - 1}]`, 'system[0]', `messages[${newest}][0]`]);
    expect(fold.usage!.cache_read_input_tokens).toBeGreaterThan(1024);
    const admin = await adminToken(server.app);
    const list = (await (
      await server.app.api(`/api/admin/threads/${thread.id}/model-calls`, { token: admin })
    ).json()) as ModelCallListDto;
    // The fold's call among the summarizer's (a retention re-ask, a stand-alone prompt, may be recorded beside it).
    const summaries = list.calls.filter((call) => call.purpose === 'summary');
    expect(summaries.map((call) => [call.reportedCachedTokens, call.reportedCacheWriteTokens])).toContainEqual([
      fold.usage!.cache_read_input_tokens,
      fold.usage!.cache_creation_input_tokens,
    ]);
  });
});
