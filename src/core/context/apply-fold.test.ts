import { describe, expect, it } from 'vitest';
import { applyFold } from './apply-fold';
import { planFold } from './plan-fold';
import { calls, reply, result, seqs, state, user } from './test-fixtures';

const newSummary = { text: 'summary', tokens: 5 };

describe('applyFold', () => {
  const window = [user(1), reply(2), user(3), reply(4)];

  it('moves the folded entries into the summary with the next revision', () => {
    const before = state(window);
    const plan = planFold({ window, keep: { kind: 'messages', value: 2 } });
    const after = applyFold({ state: before, plan, newSummary });
    expect(after.summary).toEqual({ text: 'summary', tokens: 5, coveredThroughSeq: 2, revision: 1 });
    expect(seqs(after.window)).toEqual([3, 4]);
    expect(before.window).toHaveLength(4); // pure
    const again = applyFold({
      state: after,
      plan: planFold({ window: after.window, keep: { kind: 'messages', value: 1 } }),
      newSummary,
    });
    expect(again.summary).toMatchObject({ coveredThroughSeq: 3, revision: 2 });
  });

  it('is idempotent: applying a committed fold again changes nothing', () => {
    const plan = planFold({ window, keep: { kind: 'messages', value: 2 } });
    const once = applyFold({ state: state(window), plan, newSummary });
    expect(applyFold({ state: once, plan, newSummary: { text: 'other', tokens: 1 } })).toBe(once);
  });

  it('returns the state unchanged for an empty plan', () => {
    const before = state(window);
    expect(applyFold({ state: before, plan: { folded: [], kept: window }, newSummary })).toBe(before);
  });

  it('rejects a plan that does not fit the state', () => {
    expect(() => applyFold({ state: state(window), plan: { folded: [user(9)], kept: [] }, newSummary })).toThrow(
      /not in the unpinned window: 9/,
    );
    expect(() =>
      applyFold({
        state: state(window, { memoryMode: 'window-only' }),
        plan: { folded: [user(1)], kept: [] },
        newSummary,
      }),
    ).toThrow(/window-only/);
  });

  it('moves pinned entries the summary now reaches into pinned', () => {
    const withPin = [
      user(1),
      { ...calls(2, ['a']), pinned: true },
      { ...result(3, 'a'), pinned: true },
      user(4),
      reply(5),
    ];
    const plan = planFold({ window: withPin, keep: { kind: 'messages', value: 1 } });
    const after = applyFold({ state: state(withPin), plan, newSummary });
    expect(after.summary?.coveredThroughSeq).toBe(4);
    expect(seqs(after.pinned)).toEqual([2, 3]);
    expect(seqs(after.window)).toEqual([5]);
  });
});
