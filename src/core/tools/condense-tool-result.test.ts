import { describe, expect, it } from 'vitest';
import { createTokenCounter } from '../context';
import { condenseToolResult, truncateResult } from './condense-tool-result';
import type { PackMessage } from '../context';

const counter = createTokenCounter('o200k_base');
const log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const text = Array.from({ length: 3000 }, (_, index) => `line ${index}: order ORD-${1000 + index} shipped`).join('\n');

function deps(reply: (messages: PackMessage[]) => string) {
  const seen: PackMessage[][] = [];
  return {
    seen,
    deps: {
      counter,
      log,
      inlineTokens: 100,
      inputMaxTokens: 2000,
      calls: { record: async () => undefined },
      summarizer: {
        model: 'stub',
        summarize: async ({ messages }: { messages: PackMessage[] }) => {
          seen.push(messages);
          return { text: reply(messages), toolCalls: [], usage: null };
        },
      },
    },
  };
}

describe('condenseToolResult', () => {
  it('keeps a small result as is', async () => {
    const { deps: d, seen } = deps(() => 'x');
    expect(await condenseToolResult({ threadId: 't', toolName: 'tool', handle: 'h', text: 'short' }, d)).toEqual({
      content: 'short',
      condensed: false,
    });
    expect(seen).toHaveLength(0);
  });

  it('condenses a large one part by part, each on the notes so far, within the cap, ending with the handle', async () => {
    const { deps: d, seen } = deps(() => `notes after ${seen.length} parts; ORD-1000`);
    const result = await condenseToolResult({ threadId: 't', toolName: 'orders', handle: 'run-1', text }, d);
    expect(result.condensed).toBe(true);
    expect(seen.length).toBeGreaterThan(1);
    expect(seen[1]?.[1]?.content).toContain('Your notes on the earlier parts');
    expect(seen[1]?.[1]?.content).toContain('notes after 1 parts');
    expect(seen[0]?.[1]?.content).toContain('Condense to at most 40 tokens');
    expect(result.content).toMatch(/^\[Condensed from \d+ tokens/);
    expect(result.content).toContain(`read_tool_result(handle="run-1", offset, length)`);
    expect(counter.countText(result.content)).toBeLessThanOrEqual(100 + 20);
  });

  it('falls back to the head of the text when the summarizer fails', async () => {
    const { deps: d } = deps(() => '');
    const result = await condenseToolResult({ threadId: 't', toolName: 'orders', handle: 'run-1', text }, d);
    expect(result.content).toContain('line 0: order ORD-1000');
    expect(counter.countText(result.content)).toBeLessThanOrEqual(120);
  });
});

describe('truncateResult', () => {
  it('cuts above the limit with a marker', () => {
    expect(truncateResult('abc', 5)).toBe('abc');
    expect(truncateResult('abcdefgh', 5)).toBe(
      'abcde\n[… truncated: the result had 8 characters; only the first 5 are kept]',
    );
  });
});
