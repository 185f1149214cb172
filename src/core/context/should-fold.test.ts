import { describe, expect, it } from 'vitest';
import { getModelProfile } from './model-profile';
import type { TriggerPolicy } from './policies';
import { HELD_RECALL_TRIGGER_WEIGHT, shouldFold } from './should-fold';
import { state, user } from './test-fixtures';

const profile = getModelProfile('custom', { maxInputTokens: 10_000, reservedOutputTokens: 1000 });
const tokens = (value: number): TriggerPolicy => ({ conditions: [{ kind: 'tokens', value }] });
const summary = (tokenCount: number) => ({ text: 's', tokens: tokenCount, coveredThroughSeq: 0, revision: 1 });

describe('shouldFold', () => {
  it('never folds an empty thread', () => {
    expect(shouldFold(state([]), tokens(1), profile)).toEqual({ fold: false, reasons: [] });
    expect(shouldFold(state([], { summary: summary(5000) }), tokens(1), profile).fold).toBe(false);
  });

  it('fires exactly at the threshold (>=), counting window plus summary tokens', () => {
    const window = [user(1, 300), user(2, 200)];
    expect(shouldFold(state(window, { summary: summary(500) }), tokens(1000), profile)).toEqual({
      fold: true,
      reasons: ['tokens=1000: 1000 >= 1000'],
    });
    expect(shouldFold(state(window, { summary: summary(499) }), tokens(1000), profile).fold).toBe(false);
    expect(shouldFold(state(window), tokens(500), profile).fold).toBe(true);
    expect(shouldFold(state(window), tokens(501), profile).fold).toBe(false);
  });

  it('counts the recall notes held since the last fold (sticky recall), each token twice', () => {
    const window = [user(1, 300), user(2, 200)];
    expect(HELD_RECALL_TRIGGER_WEIGHT).toBe(2);
    expect(shouldFold(state(window, { summary: summary(100), heldRecallTokens: 200 }), tokens(1000), profile)).toEqual({
      fold: true,
      reasons: ['tokens=1000: 1000 >= 1000'],
    });
    expect(
      shouldFold(state(window, { summary: summary(100), heldRecallTokens: 199 }), tokens(1000), profile).fold,
    ).toBe(false);
  });

  it('fires exactly at messages=N and fraction=F', () => {
    const window = [user(1, 10), user(2, 10), user(3, 10)];
    expect(shouldFold(state(window), { conditions: [{ kind: 'messages', value: 3 }] }, profile).fold).toBe(true);
    expect(shouldFold(state(window), { conditions: [{ kind: 'messages', value: 4 }] }, profile).fold).toBe(false);
    const big = [user(1, 5000), user(2, 2500)];
    expect(shouldFold(state(big), { conditions: [{ kind: 'fraction', value: 0.75 }] }, profile)).toEqual({
      fold: true,
      reasons: ['fraction=0.75: 7500 >= 7500'],
    });
    expect(shouldFold(state([user(1, 7499)]), { conditions: [{ kind: 'fraction', value: 0.75 }] }, profile).fold).toBe(
      false,
    );
  });

  it('fires when any condition fires, listing each', () => {
    const policy: TriggerPolicy = {
      conditions: [
        { kind: 'tokens', value: 100 },
        { kind: 'messages', value: 2 },
        { kind: 'fraction', value: 0.5 },
      ],
    };
    expect(shouldFold(state([user(1, 10), user(2, 10)]), policy, profile)).toEqual({
      fold: true,
      reasons: ['messages=2: 2 >= 2'],
    });
    expect(shouldFold(state([user(1, 150)]), policy, profile)).toEqual({
      fold: true,
      reasons: ['tokens=100: 150 >= 100'],
    });
    expect(shouldFold(state([user(1, 6000), user(2, 1)]), policy, profile).reasons).toHaveLength(3);
    expect(shouldFold(state([user(1, 50)]), policy, profile)).toEqual({ fold: false, reasons: [] });
  });

  it('never folds in window-only mode', () => {
    expect(shouldFold(state([user(1, 9000)], { memoryMode: 'window-only' }), tokens(1), profile)).toEqual({
      fold: false,
      reasons: [],
    });
  });

  it('ignores entries before the context start', () => {
    const window = [user(1, 900), user(2, 100)];
    expect(shouldFold(state(window, { contextStartSeq: 2 }), tokens(500), profile).fold).toBe(false);
  });
});
