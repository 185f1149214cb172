import { describe, expect, it } from 'vitest';
import type { PackMessage } from './types';
import { assertPackValid, validatePackOrdering } from './validate-pack-ordering';

const system: PackMessage = { role: 'system', content: 'prefix', tokens: 1 };
const asks: PackMessage = { role: 'user', content: 'q', tokens: 1 };
const answers: PackMessage = { role: 'assistant', content: 'a', tokens: 1 };
const calling = (...ids: string[]): PackMessage => ({
  role: 'assistant',
  content: '',
  tokens: 1,
  toolCalls: ids.map((id) => ({ id, name: 'f', args: {} })),
});
const tool = (id: string): PackMessage => ({ role: 'tool', content: 'r', toolCallId: id, tokens: 1 });

describe('validatePackOrdering', () => {
  it('accepts tool results in any order right after their call', () => {
    expect(
      validatePackOrdering([system, asks, calling('a', 'b', 'c'), tool('c'), tool('a'), tool('b'), answers]),
    ).toEqual({ ok: true, value: true });
  });

  it.each([
    ['a tool message after a user message', [system, asks, tool('a')], 'does not follow'],
    ['a tool message first', [tool('a')], 'does not follow'],
    ['an unanswered call', [system, calling('a', 'b'), tool('a'), asks], 'tool calls b are not answered'],
    ['a call answered after another message', [system, calling('a'), asks, tool('a')], 'not answered'],
    ['a result for another call', [system, calling('a'), tool('a'), tool('x')], 'answers x'],
    ['a call answered twice', [system, calling('a'), tool('a'), tool('a')], 'answered twice'],
    [
      'results of an earlier assistant message',
      [system, calling('a'), calling('b'), tool('b'), tool('a')],
      'tool calls a are not answered',
    ],
  ])('rejects %s', (_, messages, problem) => {
    const checked = validatePackOrdering(messages);
    expect(!checked.ok && checked.error).toContain(problem);
    expect(() => assertPackValid(messages)).toThrow(/Invalid context pack/);
  });

  it('in strict mode also rejects later system messages, tool exchanges and repeated roles', () => {
    expect(validatePackOrdering([system, asks, answers, asks], 'strict').ok).toBe(true);
    const later = validatePackOrdering([system, asks, system, answers], 'strict');
    expect(!later.ok && later.error).toContain('system message after the first');
    const tools = validatePackOrdering([system, calling('a'), tool('a')], 'strict');
    expect(!tools.ok && tools.error).toContain('tool exchange in a strict pack');
    const repeated = validatePackOrdering([system, asks, asks], 'strict');
    expect(!repeated.ok && repeated.error).toContain('two consecutive user messages');
    expect(validatePackOrdering([system, asks, asks]).ok).toBe(true);
  });

  it('with perCallFrom, rejects a system message in front of the stable content', () => {
    const note = { role: 'system' as const, content: 'per-call note', tokens: 5 };
    expect(validatePackOrdering([system, asks, answers, note, asks], 'openai', { perCallFrom: 3 }).ok).toBe(true);
    const early = validatePackOrdering([system, note, asks, answers], 'openai', { perCallFrom: 4 });
    expect(!early.ok && early.error).toContain('system message before the per-call parts');
  });
});
