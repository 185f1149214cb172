import { describe, expect, it } from 'vitest';
import { getModelProfile } from './model-profile';
import { planFold } from './plan-fold';
import type { KeepPolicy } from './policies';
import { calls, entry, note, parallelExchange, reply, result, seqs, user } from './test-fixtures';
import type { ContextEntry } from './types';

const messages = (value: number): KeepPolicy => ({ kind: 'messages', value });
const tokens = (value: number): KeepPolicy => ({ kind: 'tokens', value });

function expectPartition(window: ContextEntry[], plan: { folded: ContextEntry[]; kept: ContextEntry[] }): void {
  expect([...plan.folded, ...plan.kept].map((item) => item.seq).sort((a, b) => a - b)).toEqual(
    window.map((item) => item.seq),
  );
  expect(plan.kept[0]?.role).not.toBe('tool');
}

describe('planFold', () => {
  it('folds nothing from an empty window', () => {
    expect(planFold({ window: [], keep: messages(12) })).toEqual({ folded: [], kept: [] });
  });

  it('keeps the newest entries that fit and folds the rest', () => {
    const window = [user(1), reply(2), user(3), reply(4), user(5)];
    const plan = planFold({ window, keep: messages(2) });
    expect(seqs(plan.folded)).toEqual([1, 2, 3]);
    expect(seqs(plan.kept)).toEqual([4, 5]);
    const byTokens = planFold({ window: [user(1, 50), reply(2, 50), user(3, 30), reply(4, 30)], keep: tokens(60) });
    expect(seqs(byTokens.kept)).toEqual([3, 4]);
  });

  it('folds nothing when the whole window fits the keep', () => {
    const window = [user(1), reply(2), user(3)];
    expect(planFold({ window, keep: messages(3) })).toEqual({ folded: [], kept: window });
    expect(planFold({ window, keep: tokens(30) })).toEqual({ folded: [], kept: window });
  });

  it.each([1, 3, 10])('never cuts a tool exchange with %i parallel calls', (count) => {
    const exchange = parallelExchange(3, count);
    const window = [user(1), reply(2), ...exchange, reply(3 + count + 1)];
    // Room for the last reply and all but one entry of the exchange: the exchange is folded whole.
    const plan = planFold({ window, keep: messages(count + 1) });
    expectPartition(window, plan);
    expect(seqs(plan.kept)).toEqual([3 + count + 1]);
    expect(seqs(plan.folded)).toEqual(seqs(window.slice(0, -1)));
    // Room for all of it: kept whole.
    const roomy = planFold({ window, keep: messages(count + 2) });
    expect(seqs(roomy.kept)).toEqual(seqs(window.slice(2)));
  });

  it('keeps tool messages answering two different assistant messages with both of them', () => {
    const window = [user(1), calls(2, ['a']), calls(3, ['b']), result(4, 'b'), result(5, 'a'), reply(6)];
    for (let keep = 1; keep <= 6; keep += 1) {
      const plan = planFold({ window, keep: messages(keep) });
      expectPartition(window, plan);
      const keptSeqs = seqs(plan.kept);
      const exchange = [2, 3, 4, 5];
      expect(exchange.every((seq) => keptSeqs.includes(seq)) || exchange.every((seq) => !keptSeqs.includes(seq))).toBe(
        true,
      );
    }
  });

  it('keeps the newest user turn when keep-by-tokens cannot hold even the newest entry', () => {
    const window = [user(1, 10), reply(2, 10), user(3, 500), reply(4, 400)];
    const plan = planFold({ window, keep: tokens(100) });
    expect(seqs(plan.kept)).toEqual([3, 4]);
    expect(seqs(plan.folded)).toEqual([1, 2]);
  });

  it('keeps the newest user turn including its tool exchange when nothing fits', () => {
    const window = [user(1), user(2, 300), ...parallelExchange(3, 3, 'c', 300)];
    const plan = planFold({ window, keep: tokens(50) });
    expect(seqs(plan.kept)).toEqual([2, 3, 4, 5, 6]);
  });

  it('keeps the newest block when nothing fits and no user message exists', () => {
    const plan = planFold({ window: [reply(1, 100), reply(2, 100)], keep: tokens(10) });
    expect(seqs(plan.kept)).toEqual([2]);
  });

  it('keeps one huge message alone rather than splitting it', () => {
    const plan = planFold({ window: [user(1, 100_000)], keep: tokens(10) });
    expect(plan).toEqual({ folded: [], kept: [user(1, 100_000)] });
  });

  it('folds system entries like any other', () => {
    const window = [note(1), user(2), note(3), reply(4)];
    const plan = planFold({ window, keep: messages(1) });
    expect(seqs(plan.folded)).toEqual([1, 2, 3]);
  });

  it('never folds a pinned entry or the exchange around it', () => {
    const window = [user(1), { ...calls(2, ['a']), pinned: true }, result(3, 'a'), user(4), reply(5)];
    const plan = planFold({ window, keep: messages(1) });
    expect(seqs(plan.folded)).toEqual([1, 4]);
    expect(seqs(plan.kept)).toEqual([2, 3, 5]);
  });

  it('keeps a fraction of the max input tokens, which needs the profile', () => {
    const profile = getModelProfile('custom', { maxInputTokens: 1000, reservedOutputTokens: 100 });
    const window = [user(1, 100), reply(2, 100), user(3, 50), reply(4, 50)];
    expect(seqs(planFold({ window, keep: { kind: 'fraction', value: 0.1 }, profile }).kept)).toEqual([3, 4]);
    expect(() => planFold({ window, keep: { kind: 'fraction', value: 0.1 } })).toThrow(/needs the model profile/);
  });

  it('never starts the kept window with a tool message, even when a stray one is there', () => {
    const window = [user(1), reply(2), entry(3, 'tool', 10, { toolCallId: 'gone' }), user(4)];
    const plan = planFold({ window, keep: messages(2) });
    expectPartition(window, plan);
    expect(seqs(plan.kept)).toEqual([4]);
  });
});
