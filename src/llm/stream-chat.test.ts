import { promptCacheKeyOf, sendsPromptCacheKey } from './model-ports';
import { ChatOpenAI } from '@langchain/openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  replyWithCut,
  replyWithError,
  replyWithText,
  replyWithToolCalls,
  startOpenAIStub,
  type OpenAIStub,
} from '../../test/support/openai-stub.js';
import type { PackMessage } from '../core/context/types.js';
import { ModelCallError } from './classify-provider-error.js';
import type { OpenAIToolDefinition } from './count-chat-tokens.js';
import { streamChat } from './stream-chat.js';

let stub: OpenAIStub;

beforeAll(async () => {
  stub = await startOpenAIStub({ maxContextTokens: 500 });
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

function model(options: { timeoutMs?: number; baseURL?: string } = {}): ChatOpenAI {
  return new ChatOpenAI({
    model: 'gpt-4o-mini',
    apiKey: 'test-key',
    configuration: { baseURL: options.baseURL ?? stub.url },
    streamUsage: true,
    maxRetries: 0,
    ...(options.timeoutMs && { timeout: options.timeoutMs }),
  });
}

const message = (role: PackMessage['role'], content: string, extra: Partial<PackMessage> = {}): PackMessage => ({
  role,
  content,
  tokens: 0,
  ...extra,
});
const pack: PackMessage[] = [message('system', 'You are helpful.'), message('user', 'Hello there')];

const tools: OpenAIToolDefinition[] = [
  {
    type: 'function',
    function: {
      name: 'calculator',
      description: 'Evaluates arithmetic',
      parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
    },
  },
  {
    type: 'function',
    function: { name: 'current_time', description: 'Current time', parameters: { type: 'object', properties: {} } },
  },
];

async function failure(promise: Promise<unknown>): Promise<ModelCallError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ModelCallError);
  return error as ModelCallError;
}

describe('streamChat over HTTP with ChatOpenAI', () => {
  it('sends the same tools with tool_choice none when no call is allowed, and the prompt cache key', async () => {
    stub.setResponder(() => replyWithText('No tools now.'));
    const before = stub.requests.length;
    await streamChat({ model: model(), messages: pack, tools, toolChoice: 'none', promptCacheKey: 'thread-key' });
    const body = stub.requests[before]!.body;
    expect(body.tools?.map((tool) => tool.function.name)).toEqual(tools.map((tool) => tool.function.name));
    expect(body).toMatchObject({ tool_choice: 'none', prompt_cache_key: 'thread-key' });
    await streamChat({ model: model(), messages: pack, tools });
    expect(stub.requests[before + 1]!.body.tool_choice).toBeUndefined();
    expect(stub.requests[before + 1]!.body.prompt_cache_key).toBeUndefined();
  });

  it('streams text deltas and reports provider usage', async () => {
    stub.setResponder(() => replyWithText('The answer is forty two.'));
    const deltas: string[] = [];
    const result = await streamChat({ model: model(), messages: pack, onDelta: (text) => deltas.push(text) });
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe('The answer is forty two.');
    expect(result).toMatchObject({ text: 'The answer is forty two.', toolCalls: [], finishReason: 'stop' });
    expect(result.usage).toEqual({
      promptTokens: stub.requests[0]!.promptTokens,
      completionTokens: 6,
      cachedTokens: 0,
    });
    expect(stub.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('parses a streamed tool call and sends the tools in OpenAI format', async () => {
    stub.setResponder(() =>
      replyWithToolCalls([{ id: 'call_1', name: 'calculator', arguments: { expression: '2+2' } }]),
    );
    const result = await streamChat({ model: model(), messages: pack, tools });
    expect(result.toolCalls).toEqual([{ id: 'call_1', name: 'calculator', args: { expression: '2+2' } }]);
    expect(result.finishReason).toBe('tool_calls');
    expect(result.usage?.completionTokens).toBeGreaterThan(0);
    expect(stub.requests[0]!.body.tools?.map((tool) => tool.function.name)).toEqual(['calculator', 'current_time']);
  });

  it('binds a tools list once per model, and sends the current list on every call', async () => {
    /** The model with its `bindTools` calls counted. */
    const counted = () => {
      const chatModel = model();
      const bind = chatModel.bindTools.bind(chatModel);
      const counter = { model: chatModel, binds: 0 };
      chatModel.bindTools = (...args: Parameters<typeof chatModel.bindTools>) => {
        counter.binds += 1;
        return bind(...args);
      };
      return counter;
    };
    stub.setResponder(() => replyWithText('ok'));
    const first = counted();
    await streamChat({ model: first.model, messages: pack, tools });
    await streamChat({ model: first.model, messages: pack, tools });
    await streamChat({ model: first.model, messages: pack, tools: tools.slice(0, 1) });
    await streamChat({ model: first.model, messages: pack });
    expect(first.binds).toBe(2);
    expect(stub.requests.map((request) => request.body.tools?.map((tool) => tool.function.name) ?? [])).toEqual([
      ['calculator', 'current_time'],
      ['calculator', 'current_time'],
      ['calculator'],
      [],
    ]);
    // Another model with the same tools gets its own binding (its own endpoint, key and options).
    const second = counted();
    await streamChat({ model: second.model, messages: pack, tools });
    expect(second.binds).toBe(1);
    expect(stub.requests).toHaveLength(5);
  });

  it('parses parallel tool calls, text before them, and invalid arguments', async () => {
    stub.setResponder(() =>
      replyWithToolCalls(
        [
          { id: 'call_a', name: 'calculator', arguments: { expression: '6*7' } },
          { id: 'call_b', name: 'current_time', arguments: {} },
          { id: 'call_c', name: 'calculator', arguments: '{"expression": ' },
        ],
        { text: 'Let me check. ' },
      ),
    );
    const result = await streamChat({ model: model(), messages: pack, tools });
    expect(result.text).toBe('Let me check. ');
    expect(result.toolCalls).toEqual([
      { id: 'call_a', name: 'calculator', args: { expression: '6*7' } },
      { id: 'call_b', name: 'current_time', args: {} },
    ]);
    expect(result.invalidToolCalls).toMatchObject([
      { id: 'call_c', name: 'calculator', rawArguments: '{"expression": ' },
    ]);
  });

  it('round-trips a tool exchange the stub accepts', async () => {
    const exchange: PackMessage[] = [
      ...pack,
      message('assistant', '', {
        toolCalls: [
          { id: 'call_a', name: 'calculator', args: { expression: '6*7' } },
          { id: 'call_b', name: 'current_time', args: {} },
        ],
      }),
      message('tool', '12:00', { toolCallId: 'call_b' }),
      message('tool', '42', { toolCallId: 'call_a' }),
    ];
    const result = await streamChat({ model: model(), messages: exchange, tools });
    expect(result.finishReason).toBe('stop');
    expect(stub.requests[0]!.body.messages.at(2)).toMatchObject({
      role: 'assistant',
      tool_calls: [
        { id: 'call_a', function: { name: 'calculator', arguments: '{"expression":"6*7"}' } },
        { id: 'call_b' },
      ],
    });
  });

  it('surfaces the stub rejecting an orphan tool message as bad_request', async () => {
    const orphan = [...pack, message('tool', '42', { toolCallId: 'call_x' })];
    const error = await failure(streamChat({ model: model(), messages: orphan }));
    expect(error).toMatchObject({ kind: 'bad_request', retryable: false, status: 400 });
    expect(error.message).toMatch(/must be a response to a preceeding message with 'tool_calls'/);
  });

  it('surfaces the stub rejecting an unanswered tool call as bad_request', async () => {
    const unanswered = [
      ...pack,
      message('assistant', '', { toolCalls: [{ id: 'call_y', name: 'calculator', args: {} }] }),
      message('user', 'and?'),
    ];
    const error = await failure(streamChat({ model: model(), messages: unanswered }));
    expect(error).toMatchObject({ kind: 'bad_request', retryable: false, status: 400 });
    expect(error.message).toMatch(/did not have response messages: call_y/);
  });

  it('classifies context_length_exceeded as context_overflow', async () => {
    const error = await failure(streamChat({ model: model(), messages: [message('user', 'many words '.repeat(400))] }));
    expect(error).toMatchObject({ kind: 'context_overflow', retryable: false, status: 400 });
    expect(error.message).toMatch(/maximum context length is 500 tokens/);
  });

  it('classifies 429 with retry-after as rate_limited with retryAfterMs', async () => {
    stub.setResponder(() => replyWithError(429, { retryAfterSeconds: 7 }));
    const error = await failure(streamChat({ model: model(), messages: pack }));
    expect(error).toMatchObject({ kind: 'rate_limited', retryable: true, retryAfterMs: 7000, status: 429 });
    expect(stub.requests).toHaveLength(1); // no SDK retries
  });

  it('classifies 500 and 503 as retryable server errors', async () => {
    stub.setResponder(() => replyWithError(500));
    expect(await failure(streamChat({ model: model(), messages: pack }))).toMatchObject({
      kind: 'server',
      retryable: true,
      status: 500,
    });
    stub.setResponder(() => replyWithError(503));
    expect(await failure(streamChat({ model: model(), messages: pack }))).toMatchObject({
      kind: 'server',
      retryable: true,
      status: 503,
    });
    expect(stub.requests).toHaveLength(2);
  });

  it('classifies a stream cut mid-answer as network, keeping the partial text', async () => {
    stub.setResponder(() => replyWithCut('Half of an'));
    const deltas: string[] = [];
    const error = await failure(streamChat({ model: model(), messages: pack, onDelta: (text) => deltas.push(text) }));
    expect(error).toMatchObject({ kind: 'network', retryable: true, partialText: 'Half of an' });
    expect(deltas.join('')).toBe('Half of an');
  });

  it('aborts via the signal mid-stream', async () => {
    // Eight words 40 ms apart: a stream left running after the abort would deliver the other six within ~240 ms.
    stub.setResponder(() => replyWithText('one two three four five six seven eight', { chunkDelayMs: 40 }));
    const controller = new AbortController();
    const deltas: string[] = [];
    const error = await failure(
      streamChat({
        model: model(),
        messages: pack,
        signal: controller.signal,
        onDelta: (text) => {
          deltas.push(text);
          if (deltas.length === 2) controller.abort();
        },
      }),
    );
    expect(error).toMatchObject({ kind: 'aborted', retryable: false });
    expect(error.partialText).toBe('one two ');
    // No delta after the abort, however long the rest of the stream would have taken.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(deltas.join('')).toBe('one two ');
  });

  it('aborts before the first byte', async () => {
    stub.setResponder(() => replyWithText('late', { firstByteDelayMs: 5_000 }));
    const error = await failure(streamChat({ model: model(), messages: pack, signal: AbortSignal.timeout(100) }));
    expect(error).toMatchObject({ kind: 'aborted', retryable: false });
  });

  it('classifies the SDK request timeout as timeout', async () => {
    stub.setResponder(() => replyWithText('late', { firstByteDelayMs: 5_000 }));
    const error = await failure(streamChat({ model: model({ timeoutMs: 100 }), messages: pack }));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('classifies a refused connection as network', async () => {
    const closed = await startOpenAIStub();
    const url = closed.url;
    await closed.close();
    const error = await failure(streamChat({ model: model({ baseURL: url }), messages: pack }));
    expect(error).toMatchObject({ kind: 'network', retryable: true });
  });

  it('rethrows an onDelta error as is', async () => {
    const bug = new Error('subscriber bug');
    await expect(
      streamChat({
        model: model(),
        messages: pack,
        onDelta: () => {
          throw bug;
        },
      }),
    ).rejects.toBe(bug);
  });

  it('passes callTags to the run, where callbacks see them', async () => {
    const seen: string[][] = [];
    const tagged = model();
    tagged.callbacks = [
      {
        handleChatModelStart: (
          _llm: unknown,
          _messages: unknown,
          _runId: string,
          _parent?: string,
          _extra?: unknown,
          tags?: string[],
        ) => {
          seen.push(tags ?? []);
        },
      },
    ];
    await streamChat({ model: tagged, messages: pack, callTags: ['summary'] });
    expect(seen).toEqual([['summary']]);
  });
});

describe('sendsPromptCacheKey (PROMPT_CACHE_KEY)', () => {
  it("auto: only to OpenAI's own API; on and off as said; never to the offline model", () => {
    expect(sendsPromptCacheKey('auto', { provider: 'openai-compatible' })).toBe(true);
    expect(sendsPromptCacheKey('auto', { provider: 'openai-compatible', baseUrl: 'https://api.openai.com/v1' })).toBe(
      true,
    );
    expect(sendsPromptCacheKey('auto', { provider: 'openai-compatible', baseUrl: 'http://127.0.0.1:11434/v1' })).toBe(
      false,
    );
    expect(sendsPromptCacheKey('on', { provider: 'openai-compatible', baseUrl: 'http://127.0.0.1:11434/v1' })).toBe(
      true,
    );
    expect(sendsPromptCacheKey('off', { provider: 'openai-compatible' })).toBe(false);
    expect(sendsPromptCacheKey('on', { provider: 'offline' })).toBe(false);
    expect(promptCacheKeyOf('a')).toMatch(/^[0-9a-f]{32}$/);
    expect(promptCacheKeyOf('a')).not.toBe(promptCacheKeyOf('b'));
  });
});
