import { describe, expect, it } from 'vitest';
import type { OpenAIFunctionTool, PackMessage } from '../core/context/types.js';
import {
  anthropicMaxTokens,
  MISSING_TOOL_RESULT,
  OPENING_USER_TEXT,
  SERVER_NOTE_MARK,
  toAnthropicRequest,
  type AnthropicRequestOptions,
} from './anthropic-messages-request.js';

const options: AnthropicRequestOptions = { model: 'claude-sonnet-4-5', maxTokens: 4096, cacheTtl: '5m' };
const mark = { type: 'ephemeral', ttl: '5m' };
const tools: OpenAIFunctionTool[] = [
  { type: 'function', function: { name: 'search', description: 'Search', parameters: { type: 'object' } } },
  {
    type: 'function',
    function: { name: 'save_memory', description: 'Save', parameters: { properties: { text: { type: 'string' } } } },
  },
];

const system = (content: string): PackMessage => ({ role: 'system', content, tokens: 1 });
const user = (seq: number | undefined, content: string): PackMessage => ({
  role: 'user',
  content,
  tokens: 1,
  ...(seq !== undefined ? { seq } : {}),
});
const assistant = (seq: number, content: string, calls: string[] = []): PackMessage => ({
  role: 'assistant',
  content,
  seq,
  tokens: 1,
  ...(calls.length > 0 ? { toolCalls: calls.map((id) => ({ id, name: 'search', args: { q: id } })) } : {}),
});
const tool = (seq: number, id: string, content: string): PackMessage => ({
  role: 'tool',
  content,
  toolCallId: id,
  seq,
  tokens: 1,
});

/** Where the request's cache_control marks are, as readable paths. */
function breakpoints(request: ReturnType<typeof toAnthropicRequest>): string[] {
  const found: string[] = [];
  request.tools?.forEach((entry, index) => {
    if ('cache_control' in entry && entry.cache_control) found.push(`tools[${index}]`);
  });
  (Array.isArray(request.system) ? request.system : []).forEach((block, index) => {
    if (block.cache_control) found.push(`system[${index}]`);
  });
  request.messages.forEach((message, index) => {
    (Array.isArray(message.content) ? message.content : []).forEach((block, position) => {
      if ('cache_control' in block && block.cache_control) found.push(`messages[${index}][${position}]`);
    });
  });
  return found;
}

describe('toAnthropicRequest', () => {
  it('sends the leading system message as a system block, max_tokens always, and alternation by merging blocks', () => {
    const request = toAnthropicRequest(
      [system('You are helpful.\n\nSummary: earlier'), user(1, 'hi'), assistant(2, 'hello'), user(3, 'how are you')],
      options,
    );
    expect(request.system).toEqual([
      { type: 'text', text: 'You are helpful.\n\nSummary: earlier', cache_control: mark },
    ]);
    expect(request.max_tokens).toBe(4096);
    expect(request.model).toBe('claude-sonnet-4-5');
    expect(request.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(request.tools).toBeUndefined();
    expect(request.thinking).toBeUndefined();
  });

  it('keeps the per-call parts as blocks of their own after the newest user text, breakpoint 2 before them', () => {
    const recall: PackMessage = { role: 'user', content: 'Recalled: #1 ...', tokens: 1 };
    const request = toAnthropicRequest(
      [system('S'), user(1, 'first'), assistant(2, 'answer'), user(3, 'newest'), recall, system('A late note')],
      options,
    );
    expect(request.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'newest', cache_control: mark },
        { type: 'text', text: 'Recalled: #1 ...' },
        { type: 'text', text: `${SERVER_NOTE_MARK}A late note` },
      ],
    });
    expect(breakpoints(request)).toEqual(['system[0]', 'messages[2][0]']);
  });

  it('cuts the system message where its stable parts end: breakpoints on the head and on the newest summary segment', () => {
    const head = 'You are helpful.';
    const summary = '\n\n## Summary\nFirst segment.\n\nSecond segment.';
    const coverage = '\n(The summary covers the conversation through message #9.)';
    const content = head + summary + coverage;
    const ends = [head.length, content.indexOf('First segment.') + 14, head.length + summary.length];
    const request = toAnthropicRequest(
      [{ role: 'system', content, tokens: 1, stableEnds: ends }, user(10, 'hi')],
      options,
    );
    expect(request.system).toEqual([
      { type: 'text', text: head, cache_control: mark },
      { type: 'text', text: '\n\n## Summary\nFirst segment.' },
      { type: 'text', text: '\n\nSecond segment.', cache_control: mark },
      { type: 'text', text: coverage },
    ]);
    expect(breakpoints(request)).toEqual(['system[0]', 'system[2]', 'messages[0][0]']);
  });

  it('puts the third breakpoint on the last tool, converted to Anthropic tool definitions with the TTL', () => {
    const request = toAnthropicRequest([system('S'), user(1, 'q')], {
      ...options,
      cacheTtl: '1h',
      tools,
      toolChoice: 'none',
    });
    expect(request.tools).toEqual([
      { name: 'search', description: 'Search', input_schema: { type: 'object' } },
      {
        name: 'save_memory',
        description: 'Save',
        input_schema: { type: 'object', properties: { text: { type: 'string' } } },
        cache_control: { type: 'ephemeral', ttl: '1h' },
      },
    ]);
    expect(request.tool_choice).toEqual({ type: 'none' });
    expect(breakpoints(request)).toEqual(['tools[1]', 'system[0]', 'messages[0][0]']);
    expect(breakpoints(request).length).toBeLessThanOrEqual(4);
  });

  it('sends tool calls as tool_use and their results as tool_result in the very next user message, results first', () => {
    const request = toAnthropicRequest(
      [
        system('S'),
        user(1, 'look both up'),
        assistant(2, 'Looking.', ['call_a', 'call_b']),
        tool(3, 'call_a', 'result a'),
        tool(4, 'call_b', 'result b'),
      ],
      options,
    );
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'look both up' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: 'call_a', name: 'search', input: { q: 'call_a' } },
          { type: 'tool_use', id: 'call_b', name: 'search', input: { q: 'call_b' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_a', content: 'result a' },
          { type: 'tool_result', tool_use_id: 'call_b', content: 'result b', cache_control: mark },
        ],
      },
    ]);
  });

  it('answers a call without a result, and turns a result without its call into text', () => {
    const request = toAnthropicRequest(
      [system('S'), tool(1, 'call_gone', 'orphan'), assistant(2, '', ['call_x']), user(3, 'next')],
      options,
    );
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: '[Tool result call_gone]\norphan' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_x', name: 'search', input: { q: 'call_x' } }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_x', content: MISSING_TOOL_RESULT, is_error: true },
          { type: 'text', text: 'next', cache_control: mark },
        ],
      },
    ]);
  });

  it("opens with a short user line when the first message would be the assistant's, and without a system message", () => {
    const request = toAnthropicRequest([assistant(5, 'pinned answer'), user(6, 'q')], options);
    expect(request.system).toBeUndefined();
    expect(request.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: OPENING_USER_TEXT }] });
    expect(request.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(toAnthropicRequest([system('S')], options).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: OPENING_USER_TEXT }] },
    ]);
  });

  it('leaves out empty text (the API refuses it) and merges what then meets', () => {
    const request = toAnthropicRequest([system('S'), user(1, 'a'), assistant(2, '  '), user(3, 'b')], options);
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b', cache_control: mark },
        ],
      },
    ]);
  });

  it('marks the same prefix on the next call, so that call reads what this one wrote', () => {
    const first = [system('S'), user(1, 'q1'), { role: 'user' as const, content: 'recall', tokens: 1 }];
    const second = [system('S'), user(1, 'q1'), assistant(2, 'a1'), user(3, 'q2')];
    const a = toAnthropicRequest(first, options);
    const b = toAnthropicRequest(second, options);
    // The first call's breakpoint-2 block (the user's own text) is the same block, in the same place, in the second.
    expect(a.messages[0]?.content).toEqual([
      { type: 'text', text: 'q1', cache_control: mark },
      { type: 'text', text: 'recall' },
    ]);
    expect((b.messages[0]?.content as unknown[])[0]).toEqual({ type: 'text', text: 'q1' });
    expect(breakpoints(b)).toEqual(['system[0]', 'messages[2][0]']);
  });

  it('ends breakpoint 2 after a recall slot the next calls hold, so they read it instead of writing it again', () => {
    const slot: PackMessage = { role: 'user', content: 'Recalled: #1 ...', tokens: 1, held: true };
    const first = toAnthropicRequest([system('S'), user(1, 'q1'), slot, system('A late note')], options);
    expect(first.messages[0]?.content).toEqual([
      { type: 'text', text: 'q1' },
      { type: 'text', text: 'Recalled: #1 ...', cache_control: mark },
      { type: 'text', text: `${SERVER_NOTE_MARK}A late note` },
    ]);
    // The next call shows the note where it stood: the block the first call's breakpoint ended, unchanged.
    const second = toAnthropicRequest([system('S'), user(1, 'q1'), slot, assistant(2, 'a1'), user(3, 'q2')], options);
    expect(second.messages[0]?.content).toEqual([
      { type: 'text', text: 'q1' },
      { type: 'text', text: 'Recalled: #1 ...' },
    ]);
    expect(breakpoints(second)).toEqual(['system[0]', 'messages[2][0]']);
  });
  it("sends the current tool loop's thinking blocks back unchanged, drops earlier turns', and sends thinking", () => {
    const kept = new Map([
      ['call_old', [{ type: 'thinking' as const, thinking: 'old', signature: 'sig-old' }]],
      ['call_now', [{ type: 'thinking' as const, thinking: 'now', signature: 'sig-now' }]],
    ]);
    const request = toAnthropicRequest(
      [
        system('S'),
        user(1, 'earlier turn'),
        assistant(2, '', ['call_old']),
        tool(3, 'call_old', 'r'),
        assistant(4, 'done'),
        user(5, 'this turn'),
        assistant(6, '', ['call_now']),
        tool(7, 'call_now', 'r2'),
      ],
      { ...options, thinkingBudgetTokens: 2048, thinkingOf: (id) => kept.get(id) },
    );
    expect(request.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(request.messages[1]?.content).toEqual([
      { type: 'tool_use', id: 'call_old', name: 'search', input: { q: 'call_old' } },
    ]);
    expect(request.messages[5]?.content).toEqual([
      { type: 'thinking', thinking: 'now', signature: 'sig-now' },
      { type: 'tool_use', id: 'call_now', name: 'search', input: { q: 'call_now' } },
    ]);
    // max_tokens must exceed the budget.
    expect(
      toAnthropicRequest([user(1, 'q')], { ...options, maxTokens: 1024, thinkingBudgetTokens: 2048 }).max_tokens,
    ).toBe(3072);
  });

  it("takes max_tokens as the answer's cap, with a thinking budget it must exceed on top (the most a call bills)", () => {
    expect(anthropicMaxTokens(4096, undefined)).toBe(4096);
    expect(anthropicMaxTokens(4096, null)).toBe(4096);
    expect(anthropicMaxTokens(1024, 2048)).toBe(3072);
    // A budget under the cap already fits within it.
    expect(anthropicMaxTokens(4096, 2048)).toBe(4096);
  });

  it("goes without thinking when the current loop's thinking blocks are not known (they cannot be sent back)", () => {
    const request = toAnthropicRequest(
      [system('S'), user(1, 'q'), assistant(2, '', ['call_lost']), tool(3, 'call_lost', 'r')],
      { ...options, thinkingBudgetTokens: 2048, thinkingOf: () => undefined, temperature: 0 },
    );
    expect(request.thinking).toBeUndefined();
    expect(request.temperature).toBe(0);
  });

  it('marks the continued fold like the chat: system, the newest transcript message, then the task block after it', () => {
    const task: PackMessage = { role: 'user', content: '[Summary task from the server] ...', tokens: 1 };
    const request = toAnthropicRequest([system('S'), user(1, 'q'), assistant(2, 'a'), task], {
      ...options,
      tools,
      toolChoice: 'none',
    });
    expect(breakpoints(request)).toEqual(['tools[1]', 'system[0]', 'messages[1][0]']);
    expect(request.messages.at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'text', text: '[Summary task from the server] ...' }],
    });
  });
});
