import { describe, expect, it } from 'vitest';
import { parseKeepPolicy } from './parse-keep-policy';
import { formatTriggerPolicy, parseTriggerPolicy } from './parse-trigger-policy';
import { DEFAULT_KEEP, DEFAULT_TRIGGER } from './policies';

describe('parseTriggerPolicy', () => {
  it('parses the default', () => {
    expect(parseTriggerPolicy(DEFAULT_TRIGGER)).toEqual({
      ok: true,
      value: {
        conditions: [
          { kind: 'tokens', value: 6000 },
          { kind: 'fraction', value: 0.75 },
        ],
      },
    });
  });

  it('parses each form, any order, with spaces', () => {
    const parsed = parseTriggerPolicy(' fraction=0.8 , messages=100,tokens = 3000 ');
    expect(parsed.ok && parsed.value.conditions).toEqual([
      { kind: 'fraction', value: 0.8 },
      { kind: 'messages', value: 100 },
      { kind: 'tokens', value: 3000 },
    ]);
    const single = parseTriggerPolicy('tokens=3000');
    expect(single.ok && formatTriggerPolicy(single.value)).toBe('tokens=3000');
    expect(parseTriggerPolicy('fraction=1').ok).toBe(true);
  });

  it.each([
    ['', 'empty value'],
    ['tokens', 'invalid term "tokens"'],
    ['tokens=0', 'invalid term'],
    ['tokens=-5', 'invalid term'],
    ['tokens=1.5', 'invalid term'],
    ['messages=abc', 'invalid term'],
    ['fraction=0', 'invalid term'],
    ['fraction=1.2', 'invalid term'],
    ['percent=50', 'invalid term'],
    ['tokens=100,', 'invalid term ""'],
    ['tokens=100;messages=4', 'invalid term'],
    ['tokens=100,tokens=200', '"tokens" given twice'],
  ])('rejects %j naming the variable and the accepted forms', (text, problem) => {
    const parsed = parseTriggerPolicy(text);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error).toContain('SUMMARY_TRIGGER');
    expect(parsed.error).toContain(problem);
    expect(parsed.error).toMatch(/tokens=N.*messages=N.*fraction=F/);
  });

  it('names another variable when asked (per-thread overrides)', () => {
    const parsed = parseTriggerPolicy('nope', 'thread.trigger');
    expect(!parsed.ok && parsed.error.startsWith('thread.trigger:')).toBe(true);
  });
});

describe('parseKeepPolicy', () => {
  it('parses the default and each form', () => {
    expect(parseKeepPolicy(DEFAULT_KEEP)).toEqual({ ok: true, value: { kind: 'messages', value: 12 } });
    expect(parseKeepPolicy('tokens=2000')).toEqual({ ok: true, value: { kind: 'tokens', value: 2000 } });
    expect(parseKeepPolicy(' fraction=0.1 ')).toEqual({ ok: true, value: { kind: 'fraction', value: 0.1 } });
  });

  it.each(['', 'messages=12,tokens=100', 'messages=0', 'fraction=2', 'keep=12', '12'])(
    'rejects %j naming the variable and the accepted forms',
    (text) => {
      const parsed = parseKeepPolicy(text);
      expect(parsed.ok).toBe(false);
      if (parsed.ok) return;
      expect(parsed.error).toMatch(/^SUMMARY_KEEP: /);
      expect(parsed.error).toContain('exactly one of messages=N');
      expect(parsed.error).toMatch(/tokens=N.*fraction=F/);
    },
  );
});
