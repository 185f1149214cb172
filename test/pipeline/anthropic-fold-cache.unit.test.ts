/**
 * What a fold costs on Claude's cache rules, with the real pack builder and request mapping against the cache
 * emulator the benchmarks use: a fold appends a summary segment, so the call after it reads the system prefix and the
 * earlier segments, and writes only what the fold changed.
 */
import { describe, expect, it } from 'vitest';
import { buildContextPack } from '../../src/core/context/build-context-pack';
import type { ContextEntry, PackMessage, SummaryState } from '../../src/core/context/types';
import { appendSegment, singleSegment } from '../../src/core/summary/summary-segments';
import { toAnthropicRequest } from '../../src/llm/anthropic-messages-request';
import { AnthropicCacheEmulator, flattenRequest } from '../support/anthropic-cache-emulator';

// A deployment's system prompt of ~1,500 tokens (the emulator counts a quarter of the characters): above the 1,024-token
// minimum on its own, as production prompts with their house rules and tool guidance often are.
const PREFIX = Array.from(
  { length: 60 },
  (_, index) => `Rule ${index + 1}: answer the customers of Example Corp plainly and cite the policy you apply.`,
).join('\n');

const entry = (seq: number): ContextEntry => {
  const role = seq % 2 === 1 ? 'user' : 'assistant';
  const content = `${role === 'user' ? 'Question' : 'Answer'} ${seq}: about order ${1000 + seq} and its delivery.`;
  return { seq, role, content, tokens: 20 };
};
const range = (from: number, through: number): ContextEntry[] =>
  Array.from({ length: through - from + 1 }, (_, index) => entry(from + index));

function request(summary: SummaryState, window: ContextEntry[], cut = true) {
  const pack = buildContextPack({
    systemPrefix: PREFIX,
    systemPrefixTokens: Math.ceil(PREFIX.length / 2),
    state: { summary, window, pinned: [], contextStartSeq: 1, memoryMode: 'summary' },
    budget: 200_000,
  });
  const messages: PackMessage[] = cut
    ? pack.messages
    : pack.messages.map(({ stableEnds: _stableEnds, ...message }) => message);
  return toAnthropicRequest(messages, { model: 'claude-sonnet-4-5', maxTokens: 1024, cacheTtl: '5m' });
}

/** Tokens of the request's prefix through its system block whose text ends with `text`. */
function tokensThrough(body: ReturnType<typeof request>, text: string): number {
  const system = Array.isArray(body.system) ? body.system : [];
  const index = system.findIndex((block) => block.text.endsWith(text));
  expect(index).toBeGreaterThanOrEqual(0);
  return flattenRequest(body as never).blocks[index]!.end;
}

function foldedTwice(cut: boolean) {
  const cache = new AnthropicCacheEmulator({ now: () => 0 });
  const first = singleSegment('The customer asked about orders 1001 to 1010; all shipped.');
  const summary1: SummaryState = { ...first, tokens: 15, coveredThroughSeq: 10, revision: 1 };
  // Two calls before the fold: the second reads what the first wrote.
  cache.use(request(summary1, range(11, 21), cut) as never);
  cache.use(request(summary1, range(11, 23), cut) as never);
  // The fold appends a segment for messages 11-16; the window starts at 17.
  const appended = appendSegment(first, 'Orders 1011 to 1016: one was late, refunded.');
  const summary2: SummaryState = { ...appended, tokens: 30, coveredThroughSeq: 16, revision: 2 };
  const after = request(summary2, range(17, 25), cut);
  return { usage: cache.use(after as never), after };
}

describe("a fold on Claude's cache rules", () => {
  it('reads the system prefix and the earlier summary segments after a fold, and writes from the new segment on', () => {
    const { usage, after } = foldedTwice(true);
    const throughFirstSegment = tokensThrough(after, 'all shipped.');
    expect(throughFirstSegment).toBeGreaterThan(1024);
    expect(usage.cache_read_input_tokens).toBe(throughFirstSegment);
    const total = flattenRequest(after as never).total;
    expect(usage.cache_creation_input_tokens).toBe(total - throughFirstSegment - usage.input_tokens);
    // The breakpoints: the head, the newest segment, the newest message (no tools here); never more than four.
    const system = Array.isArray(after.system) ? after.system : [];
    expect(system.map((block) => Boolean(block.cache_control))).toEqual([true, false, true, false]);
    expect(system.map((block) => block.text).join('')).toContain('## Summary of the conversation so far');
  });

  it('would write the whole system prompt again with the system message as one block', () => {
    const { usage, after } = foldedTwice(false);
    expect(usage.cache_read_input_tokens).toBe(0);
    expect(usage.cache_creation_input_tokens).toBe(flattenRequest(after as never).total - usage.input_tokens);
    expect(usage.cache_creation_input_tokens).toBeGreaterThan(PREFIX.length / 4);
  });
});
