import { describe, expect, it } from 'vitest';
import type { AppError } from '../../core/errors/app-error';
import type { FacadeHttpDeps } from '../openai-facade/facade-deps';
import { readCountTokensRequest, readMessagesRequest } from './messages-request';

const facade = {
  models: ['gpt-4o-mini', 'claude-sonnet-4-5'],
  maxClientInstructionsChars: 1000,
  maxToolDescriptionChars: 50,
  serverToolNames: () => new Set(['calculator']),
} as unknown as FacadeHttpDeps;

const read = (body: Record<string, unknown>) =>
  readMessagesRequest({ model: 'claude-sonnet-4-5', max_tokens: 100, ...body }, facade);

function refusalOf(run: () => unknown): { code: string; field: unknown; message: string } {
  try {
    run();
  } catch (error) {
    const refused = error as AppError;
    return { code: refused.code, field: refused.details?.field, message: refused.message };
  }
  throw new Error('expected a refusal');
}

describe('readMessagesRequest', () => {
  it('reads blocks: tool_use as calls, tool_result as tool messages before the text, thinking dropped', () => {
    const { messages, client } = read({
      system: [
        { type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'Use metric units.' },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: '<reminder>' },
            { type: 'text', text: 'Weather?' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hm', signature: 'sig' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'rainy' }] },
            { type: 'text', text: 'and tomorrow?', cache_control: { type: 'ephemeral' } },
          ],
        },
        { role: 'user', content: 'in Celsius' },
      ],
    });
    expect(client.instructions).toBe('You are terse.\n\nUse metric units.');
    expect(messages).toEqual([
      { role: 'user', content: '<reminder>\n\nWeather?' },
      {
        role: 'assistant',
        content: 'Checking.',
        toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }],
      },
      { role: 'tool', toolCallId: 'toolu_1', content: 'rainy' },
      { role: 'user', content: 'and tomorrow?\n\nin Celsius' },
    ]);
  });

  it('marks a failed tool result, and refuses a result of no earlier call', () => {
    const history = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'run', input: {} }] },
    ];
    const { messages } = read({
      messages: [
        ...history,
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'boom', is_error: true }] },
      ],
    });
    expect(messages.at(-1)).toEqual({ role: 'tool', toolCallId: 'toolu_1', content: 'Error: boom' });
    expect(
      refusalOf(() =>
        read({ messages: [...history, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x' }] }] }),
      ),
    ).toMatchObject({ code: 'VALIDATION', field: 'messages.2.content.0.tool_use_id' });
  });

  it('refuses image and document blocks naming the block, and requires max_tokens', () => {
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA==' } };
    expect(
      refusalOf(() => read({ messages: [{ role: 'user', content: [{ type: 'text', text: 'see' }, image] }] })),
    ).toMatchObject({
      code: 'VALIDATION',
      field: 'messages.0.content.1.type',
      message: expect.stringContaining('image'),
    });
    expect(
      refusalOf(() =>
        read({
          messages: [
            { role: 'user', content: 'go' },
            { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'read', input: {} }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'document' }] }] },
          ],
        }),
      ),
    ).toMatchObject({ field: 'messages.2.content.0.content.0.type' });
    expect(
      refusalOf(() =>
        readMessagesRequest({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'x' }] }, facade),
      ),
    ).toMatchObject({ code: 'VALIDATION', field: 'max_tokens' });
  });

  it('offers custom tools, drops the typed ones Anthropic hosts, and holds descriptions to the setting', () => {
    const { tools, client } = read({
      messages: [{ role: 'user', content: 'x' }],
      tools: [
        { name: 'get_weather', description: 'The weather', input_schema: { type: 'object' } },
        { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
      ],
    });
    expect(client.tools.map((tool) => tool.function.name)).toEqual(['get_weather']);
    expect(tools.ignored).toEqual(['web_search_20250305']);
    expect(
      refusalOf(() =>
        read({ messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'long', description: 'd'.repeat(51) }] }),
      ),
    ).toMatchObject({ code: 'TOO_LARGE', field: 'tools.0.description' });
    expect(
      refusalOf(() => read({ messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'calculator' }] })),
    ).toMatchObject({ code: 'VALIDATION', field: 'tools.0.name' });
  });

  it('refuses an unknown model after reading the request; count_tokens takes CHAT_MODEL without one', () => {
    expect(
      refusalOf(() =>
        readMessagesRequest({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }, facade),
      ),
    ).toMatchObject({ code: 'NOT_FOUND' });
    expect(readCountTokensRequest({ messages: [{ role: 'user', content: 'x' }] }, facade).body.model).toBe(
      'gpt-4o-mini',
    );
  });
});
