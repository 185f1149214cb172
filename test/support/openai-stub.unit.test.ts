import { validateStrictTemplate } from './openai-stub-validation';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  lastUserText,
  replySequence,
  replyWithError,
  replyWithText,
  replyWithToolCalls,
  startOpenAIStub,
  type OpenAIStub,
} from './openai-stub.js';

let stub: OpenAIStub;

beforeAll(async () => {
  stub = await startOpenAIStub({
    maxContextTokens: 200,
    classifyRequest: (body) => (String(body.messages[0]?.content).startsWith('You summarize') ? 'summary' : 'chat'),
  });
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

async function post(body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${stub.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test-key', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

function sseEvents(text: string): string[] {
  return text
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length));
}

const user = (content: string) => ({ role: 'user', content });
const call = (id: string, name = 'lookup') => ({ id, type: 'function', function: { name, arguments: '{}' } });

describe('openai stub: rejects what OpenAI rejects', () => {
  it('rejects a tool message that answers no preceding tool call', async () => {
    const response = await post({
      model: 'gpt-4o-mini',
      messages: [user('hi'), { role: 'tool', tool_call_id: 'call_1', content: 'x' }],
    });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.text)).toEqual({
      error: {
        message:
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        type: 'invalid_request_error',
        param: 'messages.[1].role',
        code: null,
      },
    });
    expect(stub.requests[0]).toMatchObject({ status: 400, kind: 'invalid' });
  });

  it('rejects a tool message answering an id of another assistant message', async () => {
    const response = await post({
      model: 'gpt-4o-mini',
      messages: [
        user('hi'),
        { role: 'assistant', content: null, tool_calls: [call('call_a')] },
        { role: 'tool', tool_call_id: 'call_b', content: 'x' },
      ],
    });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.text).error.message).toMatch(/must be a response to a preceeding message/);
  });

  it('rejects an assistant tool call left unanswered, naming the ids', async () => {
    const response = await post({
      model: 'gpt-4o-mini',
      messages: [
        user('hi'),
        { role: 'assistant', content: '', tool_calls: [call('call_a'), call('call_b')] },
        { role: 'tool', tool_call_id: 'call_b', content: 'B' },
        user('next'),
      ],
    });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.text).error).toEqual({
      message:
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_a",
      type: 'invalid_request_error',
      param: 'messages.[1].role',
      code: null,
    });
  });

  it('accepts parallel calls answered in any order', async () => {
    const response = await post({
      model: 'gpt-4o-mini',
      messages: [
        user('hi'),
        { role: 'assistant', content: null, tool_calls: [call('call_a'), call('call_b')] },
        { role: 'tool', tool_call_id: 'call_b', content: 'B' },
        { role: 'tool', tool_call_id: 'call_a', content: 'A' },
      ],
    });
    expect(response.status).toBe(200);
  });

  it('rejects an invalid role and a missing content', async () => {
    const role = await post({ model: 'gpt-4o-mini', messages: [{ role: 'robot', content: 'x' }] });
    expect(role.status).toBe(400);
    expect(JSON.parse(role.text).error).toMatchObject({ param: 'messages[0].role', code: 'invalid_value' });
    const content = await post({ model: 'gpt-4o-mini', messages: [{ role: 'user' }] });
    expect(content.status).toBe(400);
    expect(JSON.parse(content.text).error).toEqual({
      message: "Missing required parameter: 'messages[0].content'.",
      type: 'invalid_request_error',
      param: 'messages[0].content',
      code: 'missing_required_parameter',
    });
  });

  it('rejects a prompt above maxContextTokens with context_length_exceeded', async () => {
    const response = await post({ model: 'gpt-4o-mini', messages: [user('word '.repeat(300))] });
    expect(response.status).toBe(400);
    const { error } = JSON.parse(response.text);
    expect(error).toMatchObject({ code: 'context_length_exceeded', type: 'invalid_request_error', param: 'messages' });
    expect(error.message).toBe(
      `This model's maximum context length is 200 tokens. However, your messages resulted in ${stub.requests[0]!.promptTokens} tokens. Please reduce the length of the messages.`,
    );
  });

  it('requires an API key', async () => {
    const response = await post({ model: 'gpt-4o-mini', messages: [user('hi')] }, { authorization: '' });
    expect(response.status).toBe(401);
  });
});

describe('openai stub: answers', () => {
  it('counts prompt tokens as OpenAI does (3 per message + role + content, +3)', async () => {
    // o200k_base: "system"=1, "You are helpful."=4, "user"=1, "Hello world"=2 tokens.
    const response = await post({
      model: 'gpt-4o-mini',
      messages: [{ role: 'system', content: 'You are helpful.' }, user('Hello world')],
    });
    expect(response.status).toBe(200);
    expect(stub.requests[0]!.promptTokens).toBe(3 + 1 + 4 + 3 + 1 + 2 + 3);
    expect(JSON.parse(response.text).usage.prompt_tokens).toBe(17);
  });

  it('counts no prompt tokens and checks no context length when told not to (benchmarks loading the server)', async () => {
    const quiet = await startOpenAIStub({
      maxContextTokens: 200,
      countPromptTokens: false,
      responder: () => replyWithText('ok', { omitUsage: true }),
    });
    try {
      const response = await fetch(`${quiet.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer test-key' },
        body: JSON.stringify({
          model: 'gpt-4o-mini',
          stream: true,
          stream_options: { include_usage: true },
          messages: [user('word '.repeat(300))],
        }),
      });
      expect(response.status).toBe(200);
      const events = sseEvents(await response.text());
      expect(events.at(-1)).toBe('[DONE]');
      expect(events.some((event) => event !== '[DONE]' && JSON.parse(event).usage)).toBe(false);
      expect(quiet.requests[0]!.promptTokens).toBe(0);
    } finally {
      await quiet.close();
    }
  });

  it('answers non-streaming requests with a chat.completion and the echo default', async () => {
    const response = await post({ model: 'gpt-4o-mini', messages: [user('ping')] });
    const body = JSON.parse(response.text);
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'stub reply to: ping' }, finish_reason: 'stop' }],
    });
    expect(body.usage.completion_tokens).toBeGreaterThan(0);
  });

  it('streams SSE chunks, a usage chunk when asked, then [DONE]', async () => {
    stub.setResponder(() => replyWithText('one two three'));
    const response = await post({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [user('x')],
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = sseEvents(response.text);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event));
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('one two three');
    expect(chunks.at(-2).choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(chunks.at(-1)).toMatchObject({
      object: 'chat.completion.chunk',
      choices: [],
      usage: { completion_tokens: 3 },
    });
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
  });

  it('streams no usage chunk without include_usage', async () => {
    const response = await post({ model: 'gpt-4o-mini', stream: true, messages: [user('x')] });
    const chunks = sseEvents(response.text)
      .slice(0, -1)
      .map((event) => JSON.parse(event));
    expect(chunks.some((chunk) => chunk.usage)).toBe(false);
  });

  it('streams parallel tool calls as indexed deltas', async () => {
    stub.setResponder(() =>
      replyWithToolCalls([
        { id: 'call_1', name: 'a', arguments: { q: 'first value' } },
        { id: 'call_2', name: 'b', arguments: { n: 2 } },
      ]),
    );
    const response = await post({ model: 'gpt-4o-mini', stream: true, messages: [user('x')] });
    const chunks = sseEvents(response.text)
      .slice(0, -1)
      .map((event) => JSON.parse(event));
    expect(chunks[0].choices[0].delta).toMatchObject({
      role: 'assistant',
      content: null,
      tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'a', arguments: '' } }],
    });
    const argumentsByIndex = ['', ''];
    for (const chunk of chunks)
      for (const delta of chunk.choices[0].delta.tool_calls ?? [])
        argumentsByIndex[delta.index] += delta.function.arguments ?? '';
    expect(argumentsByIndex.map((text) => JSON.parse(text))).toEqual([{ q: 'first value' }, { n: 2 }]);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');
  });

  it('sends scripted errors with retry-after, in sequence, and records kinds', async () => {
    stub.setResponder(replySequence([replyWithError(429, { retryAfterSeconds: 3 }), replyWithError(503)]));
    const first = await post({
      model: 'gpt-4o-mini',
      messages: [{ role: 'system', content: 'You summarize.' }, user('a')],
    });
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('3');
    expect(JSON.parse(first.text).error.code).toBe('rate_limit_exceeded');
    expect((await post({ model: 'gpt-4o-mini', messages: [user('b')] })).status).toBe(503);
    expect((await post({ model: 'gpt-4o-mini', messages: [user('c')] })).status).toBe(200);
    expect(stub.requests.map((request) => [request.kind, request.status, lastUserText(request.body)])).toEqual([
      ['summary', 429, 'a'],
      ['chat', 503, 'b'],
      ['chat', 200, 'c'],
    ]);
  });

  it('waits before the first byte when asked', async () => {
    stub.setResponder(() => replyWithText('late', { firstByteDelayMs: 150 }));
    const started = Date.now();
    await post({ model: 'gpt-4o-mini', messages: [user('x')] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('lists models', async () => {
    const response = await fetch(`${stub.url}/models`, { headers: { authorization: 'Bearer k' } });
    expect(await response.json()).toMatchObject({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }] });
  });
});

describe('openai stub: strict chat template mode rejects what strict templates reject', () => {
  const body = (messages: Record<string, unknown>[], tools?: unknown[]) => ({
    model: 'gpt-4o-mini',
    messages,
    ...(tools ? { tools } : {}),
  });
  const system = { role: 'system', content: 'prefix' };
  const user = (content: string) => ({ role: 'user', content });
  const assistant = (content: string) => ({ role: 'assistant', content });
  const tool = { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } };

  it('accepts one leading system message and strict alternation ending with the user', () => {
    expect(validateStrictTemplate(body([system, user('a'), assistant('b'), user('c')]))).toBeNull();
    expect(validateStrictTemplate(body([user('a')]))).toBeNull();
  });

  it('refuses a later system message, two turns of one role, and a last assistant turn', () => {
    expect(validateStrictTemplate(body([system, user('a'), system]))?.message).toBe(
      'System message must be at the beginning.',
    );
    expect(validateStrictTemplate(body([system, user('a'), user('b')]))?.message).toBe(
      'Conversation roles must alternate user/assistant/user/assistant/...',
    );
    expect(validateStrictTemplate(body([system, assistant('a'), user('b')]))?.message).toBe(
      'Conversation roles must alternate user/assistant/user/assistant/...',
    );
    expect(validateStrictTemplate(body([system, user('a'), assistant('b')]))?.message).toBe(
      'The last message must be from the user.',
    );
  });

  it('refuses the tool role and tool calls when no tools are offered, and takes a tool result as the user turn when they are', () => {
    const call = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
    };
    const result = { role: 'tool', tool_call_id: 'call_1', content: 'found' };
    expect(validateStrictTemplate(body([system, user('a'), call, result]))?.message).toBe(
      'This chat template does not support tool messages without tools.',
    );
    expect(validateStrictTemplate(body([system, user('a'), call, result], [tool]))).toBeNull();
  });
});
