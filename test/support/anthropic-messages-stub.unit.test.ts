import Anthropic from '@anthropic-ai/sdk';
import { ChatAnthropic } from '@langchain/anthropic';
import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PackMessage } from '../../src/core/context/types';
import { AnthropicMessagesModel } from '../../src/llm/anthropic-chat-model';
import { ModelCallError } from '../../src/llm/classify-provider-error';
import { AnthropicCacheEmulator, type MessagesRequestBody } from './anthropic-cache-emulator';
import {
  anthropicError,
  anthropicSequence,
  anthropicText,
  anthropicToolUse,
  startAnthropicStub,
  type AnthropicStub,
} from './anthropic-messages-stub';

const mark = { type: 'ephemeral' as const, ttl: '5m' as const };
/** A text of about `tokens` tokens (the emulator counts a quarter of the characters). */
const filler = (tokens: number, seed = 'x') => `${seed} `.repeat(tokens * 2).slice(0, tokens * 4);

function request(parts: { system: string; messages: MessagesRequestBody['messages'] }): MessagesRequestBody {
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 100,
    system: [{ type: 'text', text: parts.system, cache_control: mark }],
    messages: parts.messages,
  };
}

const userTurn = (text: string, marked: boolean) => ({
  role: 'user',
  content: [{ type: 'text', text, ...(marked ? { cache_control: mark } : {}) }],
});

describe('AnthropicCacheEmulator', () => {
  it('writes the prefix ending at each breakpoint above the minimum and reads it on the next request', () => {
    const cache = new AnthropicCacheEmulator();
    const system = filler(2000);
    const first = cache.use(request({ system, messages: [userTurn('q1', true)] }));
    expect(first.cache_read_input_tokens).toBe(0);
    expect(first.cache_creation_input_tokens).toBeGreaterThan(2000);
    expect(first.input_tokens).toBe(0);
    const second = cache.use(
      request({
        system,
        messages: [
          userTurn('q1', false),
          { role: 'assistant', content: [{ type: 'text', text: 'a1' }] },
          userTurn('q2', true),
        ],
      }),
    );
    // The first request's whole prompt (system + q1) is read, within 20 blocks of the new breakpoint.
    expect(second.cache_read_input_tokens).toBe(first.cache_creation_input_tokens);
    expect(second.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(cache.totals).toMatchObject({ requests: 2, cacheReadInputTokens: second.cache_read_input_tokens });
  });

  it('writes nothing below the minimum, and nothing without a breakpoint', () => {
    const cache = new AnthropicCacheEmulator();
    const small = cache.use(request({ system: 'short', messages: [userTurn('q', true)] }));
    expect(small).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    const unmarked: MessagesRequestBody = { model: 'm', max_tokens: 1, messages: [userTurn(filler(3000), false)] };
    expect(cache.use(unmarked).cache_creation_input_tokens).toBe(0);
    expect(cache.use(unmarked).cache_read_input_tokens).toBe(0);
  });

  it('honours the TTL: a 5m entry is gone after five minutes, a 1h entry is not', () => {
    let now = 0;
    const cache = new AnthropicCacheEmulator({ now: () => now });
    const body = request({ system: filler(2000), messages: [userTurn('q', true)] });
    cache.use(body);
    now += 4 * 60_000;
    expect(cache.use(body).cache_read_input_tokens).toBeGreaterThan(0);
    // The read refreshed it: four more minutes still hit; six past the last use miss.
    now += 4 * 60_000;
    expect(cache.use(body).cache_read_input_tokens).toBeGreaterThan(0);
    now += 6 * 60_000;
    expect(cache.use(body).cache_read_input_tokens).toBe(0);
    const hour = request({ system: filler(2000, 'y'), messages: [userTurn('q', true)] });
    (hour.system as { cache_control?: unknown }[])[0]!.cache_control = { type: 'ephemeral', ttl: '1h' };
    (hour.messages[0]!.content as { cache_control?: unknown }[])[0]!.cache_control = { type: 'ephemeral', ttl: '1h' };
    cache.use(hour);
    now += 50 * 60_000;
    expect(cache.use(hour).cache_read_input_tokens).toBeGreaterThan(0);
  });

  it('looks back at most 20 blocks from a breakpoint', () => {
    const system = filler(2000);
    /** The user's `q` and `more` blocks after it, the breakpoint on the last; the system unmarked. */
    const body = (more: number, marked = more): MessagesRequestBody => ({
      model: 'claude-sonnet-4-5',
      max_tokens: 1,
      system,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'q', ...(marked === 0 ? { cache_control: mark } : {}) },
            ...Array.from({ length: more }, (_, index) => ({
              type: 'text',
              text: `b${index}`,
              ...(index === marked - 1 ? { cache_control: mark } : {}),
            })),
          ],
        },
      ],
    });
    for (const [more, hit] of [
      [19, true],
      [20, true],
      [21, false],
    ] as const) {
      const cache = new AnthropicCacheEmulator();
      const written = cache.use(body(0)).cache_creation_input_tokens;
      expect(written).toBeGreaterThan(2000);
      expect(cache.use(body(more)).cache_read_input_tokens).toBe(hit ? written : 0);
    }
  });
});

describe('the Messages API stub with the Claude model', () => {
  let stub: AnthropicStub;
  beforeAll(async () => {
    stub = await startAnthropicStub();
  });
  afterAll(async () => {
    await stub.close();
  });
  beforeEach(() => stub.reset());

  const model = (options: { thinkingBudgetTokens?: number } = {}) =>
    new AnthropicMessagesModel({
      model: 'claude-sonnet-4-5',
      baseUrl: stub.url,
      maxOutputTokens: 512,
      timeoutMs: 10_000,
      cacheTtl: '5m',
      ...options,
    });
  const pack: PackMessage[] = [
    { role: 'system', content: filler(1500), tokens: 1500 },
    { role: 'user', content: 'hello', seq: 1, tokens: 5 },
  ];

  it('streams the answer and reports the prompt as input + cache writes + cache reads', async () => {
    const deltas: string[] = [];
    const first = await model().stream({ messages: pack, onDelta: (text) => deltas.push(text) });
    expect(first.text).toBe('stub reply to: hello');
    expect(deltas.join('')).toBe('stub reply to: hello');
    expect(first.finishReason).toBe('stop');
    const usage = stub.requests[0]!.usage!;
    expect(first.usage).toEqual({
      promptTokens: usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens,
      completionTokens: expect.any(Number),
      cachedTokens: 0,
      cacheWriteTokens: usage.cache_creation_input_tokens,
    });
    expect(first.usage!.cacheWriteTokens).toBeGreaterThan(1500);
    const second = await model().stream({
      messages: [
        ...pack,
        { role: 'assistant', content: first.text, seq: 2, tokens: 5 },
        { role: 'user', content: 'again', seq: 3, tokens: 5 },
      ],
    });
    expect(second.usage!.cachedTokens).toBe(first.usage!.cacheWriteTokens);
    expect(stub.requests[1]!.apiKey).toBe('sk-ant-no-key-required');
    expect(stub.requests[1]!.body.max_tokens).toBe(512);
  });

  it("returns tool calls, and sends the thinking blocks back unchanged on the loop's next round", async () => {
    stub.setResponder(
      anthropicSequence([
        anthropicToolUse([{ id: 'toolu_1', name: 'search', input: { q: 'x' } }], {
          thinking: { thinking: 'I should search.', signature: 'sig-abc' },
        }),
      ]),
    );
    const claude = model({ thinkingBudgetTokens: 1024 });
    const first = await claude.stream({ messages: pack });
    expect(first.toolCalls).toEqual([{ id: 'toolu_1', name: 'search', args: { q: 'x' } }]);
    expect(first.finishReason).toBe('tool_calls');
    await claude.stream({
      messages: [
        ...pack,
        { role: 'assistant', content: '', seq: 2, tokens: 5, toolCalls: first.toolCalls },
        { role: 'tool', content: 'found', toolCallId: 'toolu_1', seq: 3, tokens: 5 },
      ],
    });
    expect(stub.requests[1]!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(stub.requests[1]!.body.messages[1]!.content).toEqual([
      { type: 'thinking', thinking: 'I should search.', signature: 'sig-abc' },
      { type: 'tool_use', id: 'toolu_1', name: 'search', input: { q: 'x' } },
    ]);
    expect(stub.requests[1]!.rejection).toBeUndefined();
  });

  it('classifies 529 overloaded and mid-stream overloaded as retryable, prompt too long as overflow', async () => {
    stub.setResponder(anthropicSequence([anthropicError(529, 'overloaded_error', { message: 'Overloaded' })]));
    await expect(model().stream({ messages: pack })).rejects.toMatchObject({
      kind: 'server',
      retryable: true,
      status: 529,
    });
    stub.setResponder(anthropicSequence([anthropicError(529, 'overloaded_error', { midStream: true })]));
    await expect(model().stream({ messages: pack })).rejects.toMatchObject({ kind: 'server', retryable: true });
    stub.setResponder(anthropicSequence([anthropicText('ok')]));
    const tooLong: PackMessage[] = [{ role: 'user', content: filler(210_000), seq: 1, tokens: 1 }];
    const error = await model()
      .stream({ messages: tooLong })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ModelCallError);
    expect(error).toMatchObject({ kind: 'context_overflow' });
    expect(stub.requests.at(-1)!.rejection?.message).toMatch(/^prompt is too long/);
  });

  it("answers unstreamed requests and LangChain's ChatAnthropic (top-level cache_control: automatic caching)", async () => {
    const client = new Anthropic({ baseURL: stub.url, apiKey: 'sk-ant-test', maxRetries: 0 });
    const message = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      system: filler(1500),
      messages: [{ role: 'user', content: 'plain' }],
      cache_control: { type: 'ephemeral' },
    } as Parameters<typeof client.messages.create>[0] & { stream?: false });
    expect(message.content).toEqual([{ type: 'text', text: 'stub reply to: plain' }]);
    expect(message.usage.cache_creation_input_tokens).toBeGreaterThan(1500);
    expect(stub.requests[0]).toMatchObject({ stream: false, apiKey: 'sk-ant-test' });
    const chat = new ChatAnthropic({
      model: 'claude-sonnet-4-5',
      anthropicApiUrl: stub.url,
      apiKey: 'sk-ant-test',
      maxRetries: 0,
    });
    const answer = await chat.invoke([new SystemMessage(filler(1500)), new HumanMessage('from langchain')]);
    expect(answer.content).toBe('stub reply to: from langchain');
    expect(stub.totals()).toMatchObject({ requests: 2 });
  });
});
