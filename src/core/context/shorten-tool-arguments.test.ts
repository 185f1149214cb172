import { describe, expect, it } from 'vitest';
import { createTokenCounter } from './token-counter';
import { shortenToolArguments } from './shorten-tool-arguments';
import type { ContextEntry, ContextState } from './types';

const counter = createTokenCounter('o200k_base');
const entry = (seq: number, role: ContextEntry['role'], extra: Partial<ContextEntry> = {}): ContextEntry => {
  const base = { seq, role, content: extra.content ?? '', ...extra };
  return { ...base, tokens: counter.countMessage(base) };
};

describe('shortenToolArguments', () => {
  it('shortens long arguments of every call, the newest too, keeps short ones, and recounts', () => {
    const big = { path: 'a.txt', text: 'lorem ipsum dolor '.repeat(300) };
    const state: ContextState = {
      summary: null,
      pinned: [],
      contextStartSeq: 1,
      memoryMode: 'summary',
      window: [
        entry(1, 'user', { content: 'write it' }),
        entry(2, 'assistant', {
          toolCalls: [
            { id: 'c1', name: 'write_file', args: big },
            { id: 'c2', name: 'calculator', args: { expression: '1+1' } },
          ],
        }),
        entry(3, 'tool', { toolCallId: 'c1', content: 'ok' }),
        entry(4, 'tool', { toolCallId: 'c2', content: '2' }),
        entry(5, 'assistant', { toolCalls: [{ id: 'c3', name: 'write_file', args: big }] }),
        entry(6, 'tool', { toolCallId: 'c3', content: 'ok' }),
      ],
    };
    const shortened = shortenToolArguments(state, counter);
    const old = shortened.window[1];
    expect(JSON.stringify(old?.toolCalls?.[0]?.args).length).toBeLessThan(600);
    expect(String(old?.toolCalls?.[0]?.args.shortened)).toContain('full call is message #2');
    expect(old?.toolCalls?.[1]?.args).toEqual({ expression: '1+1' });
    expect(old?.tokens).toBe(counter.countMessage({ role: 'assistant', content: '', toolCalls: old?.toolCalls ?? [] }));
    expect(old?.tokens).toBeLessThan(state.window[1]?.tokens ?? 0);
    // The newest call is shortened the same way: an entry's rendering never depends on which call is the newest.
    expect(String(shortened.window[4]?.toolCalls?.[0]?.args.shortened)).toContain('full call is message #5');
    const later = shortenToolArguments(
      {
        ...state,
        window: [...state.window, entry(7, 'assistant', { toolCalls: [{ id: 'c4', name: 'write_file', args: big }] })],
      },
      counter,
    );
    expect(later.window.slice(0, 6)).toEqual(shortened.window);
    // The input (the stored window) is untouched.
    expect(state.window[1]?.toolCalls?.[0]?.args).toBe(big);
  });
});
