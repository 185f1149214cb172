import { describe, expect, it } from 'vitest';
import { countChatPromptTokens, countTextTokens, encodingForModel } from './count-chat-tokens.js';

describe('countChatPromptTokens', () => {
  it('picks the encoding from the model family', () => {
    expect(['gpt-4o-mini', 'gpt-4.1', 'gpt-5', 'o3-mini', 'openai/gpt-4o', 'llama3'].map(encodingForModel)).toEqual([
      'o200k_base',
      'o200k_base',
      'o200k_base',
      'o200k_base',
      'o200k_base',
      'o200k_base',
    ]);
    expect(['gpt-4', 'gpt-4-turbo', 'gpt-3.5-turbo'].map(encodingForModel)).toEqual([
      'cl100k_base',
      'cl100k_base',
      'cl100k_base',
    ]);
  });

  it('counts 3 per message, role, content and name, plus 3 for the reply', () => {
    // cl100k_base: "Hello world" = 2 tokens, "user" = 1, "bob" = 1.
    expect(
      countChatPromptTokens({ model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'Hello world' }] }),
    ).toBe(3 + 1 + 2 + 3);
    expect(
      countChatPromptTokens({
        model: 'gpt-3.5-turbo',
        messages: [{ role: 'user', content: 'Hello world', name: 'bob' }],
      }),
    ).toBe(3 + 1 + 2 + 1 + 1 + 3);
    expect(countTextTokens('<|endoftext|>')).toBeGreaterThan(1); // special-token text is plain text
  });

  it('counts tool calls and tool schemas', () => {
    const base = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    const withCall = {
      ...base,
      messages: [
        ...base.messages,
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c', type: 'function', function: { name: 'calculator', arguments: '{"expression":"2+2"}' } },
          ],
        },
      ],
    };
    expect(countChatPromptTokens(withCall) - countChatPromptTokens(base)).toBeGreaterThan(3 + 1 + 5);
    const tools = [
      {
        type: 'function' as const,
        function: {
          name: 'calculator',
          description: 'Evaluates arithmetic.',
          parameters: { type: 'object', properties: { expression: { type: 'string', description: 'e.g. 2+2' } } },
        },
      },
    ];
    expect(countChatPromptTokens({ ...base, tools }) - countChatPromptTokens(base)).toBeGreaterThan(20);
  });
});
