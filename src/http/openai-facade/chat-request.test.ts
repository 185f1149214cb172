import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors/app-error';
import { clientHistoryOf, clientToolsOf, inRequestIndexes, parseChatCompletionBody } from './chat-request';
import { toOpenAIError } from './openai-errors';

const parse = (messages: unknown[], extra: Record<string, unknown> = {}) =>
  parseChatCompletionBody({ model: 'm', messages, ...extra });

function fieldOf(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return (error as AppError).details?.field;
  }
  throw new Error('expected a refusal');
}

describe('clientHistoryOf', () => {
  it('takes system and developer messages out as the instructions, joins text parts, keeps tool exchanges', () => {
    const body = parse([
      { role: 'system', content: 'Be brief.' },
      { role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather ' },
          { type: 'text', text: 'in Oslo?' },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'rain' },
    ]);
    expect(clientHistoryOf(body)).toEqual({
      instructions: 'Be brief.\n\nUse metric units.',
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'c1', name: 'get_weather', arguments: '{"city":"Oslo"}' }],
        },
        { role: 'tool', toolCallId: 'c1', content: 'rain' },
      ],
      requestIndexes: [2, 3, 4],
    });
  });

  it("names a refused message by the request's own index, counting the system messages before it", () => {
    const body = parse([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hello' },
      { role: 'user', content: 'Hello again' },
    ]);
    const { requestIndexes } = clientHistoryOf(body);
    const refused = new AppError('VALIDATION', 'messages[1] (user) differs from the conversation.', {
      details: { field: 'messages' },
    });
    const renamed = inRequestIndexes(refused, requestIndexes) as AppError;
    expect(renamed.message).toBe('messages[2] (user) differs from the conversation.');
    expect(renamed.details).toEqual({ field: 'messages' });
    const other = new AppError('CONFLICT', 'messages[1] is busy');
    expect(inRequestIndexes(other, requestIndexes)).toBe(other);
  });

  it('names the field of a malformed message', () => {
    expect(fieldOf(() => parse([]))).toBe('messages');
    expect(fieldOf(() => parseChatCompletionBody({ messages: [{ role: 'user', content: 'x' }] }))).toBe('model');
    expect(fieldOf(() => clientHistoryOf(parse([{ role: 'wizard', content: 'x' }])))).toBe('messages.0.role');
    expect(
      fieldOf(() =>
        clientHistoryOf(
          parse([
            { role: 'user', content: 'x' },
            { role: 'tool', content: 'y' },
          ]),
        ),
      ),
    ).toBe('messages.1.tool_call_id');
    expect(
      fieldOf(() =>
        clientHistoryOf(
          parse([
            { role: 'user', content: 'x' },
            { role: 'tool', tool_call_id: 'c9', content: 'y' },
          ]),
        ),
      ),
    ).toBe('messages.1.tool_call_id');
    expect(
      fieldOf(() =>
        clientHistoryOf(parse([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }])),
      ),
    ).toBe('messages.0.content.0.type');
    expect(fieldOf(() => clientHistoryOf(parse([{ role: 'system', content: 'only instructions' }])))).toBe('messages');
  });

  it('gives a client tool without parameters an empty object schema', () => {
    expect(
      clientToolsOf(
        parse([{ role: 'user', content: 'x' }], { tools: [{ type: 'function', function: { name: 'ping' } }] }),
      ),
    ).toEqual([
      { type: 'function', function: { name: 'ping', description: '', parameters: { type: 'object', properties: {} } } },
    ]);
  });
});

describe('toOpenAIError', () => {
  it("maps our codes to OpenAI's status, type and code", () => {
    expect(toOpenAIError(new AppError('VALIDATION', 'bad', { details: { field: 'messages' } }))).toEqual({
      status: 400,
      retryAfterSeconds: null,
      body: { error: { message: 'bad', type: 'invalid_request_error', param: 'messages', code: null } },
    });
    expect(toOpenAIError(new AppError('BUSY', 'queue full'))).toMatchObject({
      status: 429,
      retryAfterSeconds: 1,
      body: { error: { code: 'busy' } },
    });
    expect(
      toOpenAIError(new AppError('RATE_LIMITED', 'slow down', { details: { retryAfterSeconds: 12.2 } })),
    ).toMatchObject({ status: 429, retryAfterSeconds: 13, body: { error: { code: 'rate_limit_exceeded' } } });
    expect(
      toOpenAIError(new AppError('NOT_FOUND', 'no', { details: { field: 'model', openaiCode: 'model_not_found' } }))
        .body.error,
    ).toMatchObject({ code: 'model_not_found', param: 'model' });
    expect(toOpenAIError(new AppError('PROVIDER_TIMEOUT', 'slow')).status).toBe(504);
    expect(toOpenAIError(new AppError('UNAVAILABLE', 'restarting')).status).toBe(503);
    expect(toOpenAIError(new AppError('INTERNAL', 'oops')).body.error.type).toBe('server_error');
  });
});
