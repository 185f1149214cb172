import { AIMessage, AIMessageChunk, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { convertMessagesToCompletionsMessageParams, convertMessagesToResponsesInput } from '@langchain/openai';
import { describe, expect, it } from 'vitest';
import type { PackMessage } from '../core/context/types.js';
import { assembleToolCalls, fromAIMessageChunk, toLangChainMessages } from './to-langchain-messages.js';

const PACK: PackMessage[] = [
  { role: 'system', content: 'prefix', tokens: 1 },
  { role: 'user', content: 'hi', tokens: 1, seq: 1 },
  {
    role: 'assistant',
    content: '',
    tokens: 1,
    seq: 2,
    toolCalls: [{ id: 'call_1', name: 'calculator', args: { expression: '1+1' } }],
  },
  { role: 'tool', content: '2', tokens: 1, seq: 3, toolCallId: 'call_1' },
  { role: 'assistant', content: 'It is 2.', tokens: 1, seq: 4 },
];

describe('toLangChainMessages', () => {
  it('maps every role, tool calls and tool call ids, in order', () => {
    const messages = toLangChainMessages(PACK);
    expect(messages.map((message) => message.constructor)).toEqual([
      SystemMessage,
      HumanMessage,
      AIMessage,
      ToolMessage,
      AIMessage,
    ]);
    expect((messages[2] as AIMessage).tool_calls).toEqual([
      { id: 'call_1', name: 'calculator', args: { expression: '1+1' }, type: 'tool_call' },
    ]);
    expect((messages[3] as ToolMessage).tool_call_id).toBe('call_1');
    expect((messages[4] as AIMessage).tool_calls).toEqual([]);
    expect(messages.map((message) => message.text)).toEqual(['prefix', 'hi', '', '2', 'It is 2.']);
  });

  it('carries each transcript seq for the offline model, never onto the wire of an OpenAI-compatible endpoint', () => {
    const messages = toLangChainMessages(PACK);
    expect(messages.map((message) => message.additional_kwargs.transcriptSeq)).toEqual([undefined, 1, 2, 3, 4]);
    const wire = JSON.stringify([
      convertMessagesToCompletionsMessageParams({ messages, model: 'gpt-4o-mini' }),
      convertMessagesToResponsesInput({ messages, model: 'gpt-4o-mini', zdrEnabled: false }),
    ]);
    expect(wire).toContain('call_1');
    expect(wire).not.toContain('transcriptSeq');
  });

  it('refuses a tool message without toolCallId', () => {
    expect(() => toLangChainMessages([{ role: 'tool', content: 'x', tokens: 1, seq: 9 }])).toThrow(/seq 9/);
  });
});

describe('fromAIMessageChunk', () => {
  it('reads text, tool call fragments, usage and finish reason as plain values', () => {
    const chunk = new AIMessageChunk({
      content: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
      tool_call_chunks: [{ type: 'tool_call_chunk', index: 1, id: 'call_2', name: 'x', args: '{"a"' }],
      usage_metadata: { input_tokens: 10, output_tokens: 3, total_tokens: 13 },
      response_metadata: { finish_reason: 'tool_calls' },
    });
    expect(fromAIMessageChunk(chunk)).toEqual({
      text: 'ab',
      toolCallDeltas: [{ index: 1, id: 'call_2', name: 'x', argumentsDelta: '{"a"' }],
      usage: { promptTokens: 10, completionTokens: 3, cachedTokens: null },
      finishReason: 'tool_calls',
    });
    // The provider's prompt-cache hits (OpenAI's cached_tokens) as LangChain surfaces them.
    const cached = new AIMessageChunk({
      content: '',
      usage_metadata: {
        input_tokens: 2048,
        output_tokens: 1,
        total_tokens: 2049,
        input_token_details: { cache_read: 1920 },
      },
    });
    expect(fromAIMessageChunk(cached).usage).toEqual({ promptTokens: 2048, completionTokens: 1, cachedTokens: 1920 });
    expect(fromAIMessageChunk(new AIMessageChunk('plain'))).toEqual({
      text: 'plain',
      toolCallDeltas: [],
      usage: null,
      finishReason: null,
    });
  });
});

describe('assembleToolCalls', () => {
  it('joins fragments by index, generates missing ids, and separates invalid arguments', () => {
    const { valid, invalid } = assembleToolCalls(
      [
        { index: 0, id: 'call_a', name: 'calc', argumentsDelta: '{"expr' },
        { index: 1, name: 'time', argumentsDelta: '' },
        { index: 0, argumentsDelta: 'ession":"1+1"}' },
        { index: 2, id: 'call_c', name: 'calc', argumentsDelta: '[1]' },
      ],
      () => 'generated',
    );
    expect(valid).toEqual([
      { id: 'call_a', name: 'calc', args: { expression: '1+1' } },
      { id: 'generated', name: 'time', args: {} },
    ]);
    expect(invalid).toEqual([
      { id: 'call_c', name: 'calc', rawArguments: '[1]', error: 'Tool call arguments are not a JSON object' },
    ]);
  });
});
