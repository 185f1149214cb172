import { describe, expect, it } from 'vitest';
import { getModelProfile } from './model-profile';
import { parseKeepPolicy } from './parse-keep-policy';
import { parseTriggerPolicy } from './parse-trigger-policy';
import { DEFAULT_KEEP, DEFAULT_TRIGGER, type KeepPolicy, type TriggerPolicy } from './policies';
import { validatePolicies, type PolicySettings } from './validate-policies';

function trigger(text: string): TriggerPolicy {
  const parsed = parseTriggerPolicy(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}
function keep(text: string): KeepPolicy {
  const parsed = parseKeepPolicy(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}
const gpt4o = getModelProfile('gpt-4o');

function validate(triggerText: string, keepText: string, extra: Partial<PolicySettings> = {}) {
  return validatePolicies({ trigger: trigger(triggerText), keep: keep(keepText), profile: gpt4o, ...extra });
}

describe('validatePolicies', () => {
  it('accepts the defaults, and fills the default caps', () => {
    const result = validate(DEFAULT_TRIGGER, DEFAULT_KEEP);
    expect(result).toEqual({
      ok: true,
      value: {
        trigger: trigger(DEFAULT_TRIGGER),
        keep: keep(DEFAULT_KEEP),
        summaryMaxTokens: 1200,
        summarizerInputMaxTokens: 6000,
      },
    });
    expect(validate(DEFAULT_TRIGGER, DEFAULT_KEEP, { profile: getModelProfile('gpt-4') }).ok).toBe(true);
  });

  it('rejects 12 kept messages of 2,000 tokens under a 6,000-token trigger, explaining why', () => {
    const result = validate('tokens=6000', 'messages=12', { maxMessageTokens: 2000 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toContain('SUMMARY_TRIGGER tokens=6000');
    expect(result.error).toContain('12 x 2000');
    expect(result.error).toContain('every turn would fold');
    expect(result.error).toContain('= 25200 tokens');
  });

  it('accepts messages that are small enough: 1200 + 12 x 300 = 4800 = 80% of 6000', () => {
    expect(validate('tokens=6000', 'messages=12', { maxMessageTokens: 300 }).ok).toBe(true);
    expect(validate('tokens=6000', 'messages=12', { maxMessageTokens: 301 }).ok).toBe(false);
  });

  it('bounds a token keep against token and fraction triggers (80% headroom, summary cap included)', () => {
    expect(validate('tokens=6000', 'tokens=3600').ok).toBe(true);
    expect(validate('tokens=6000', 'tokens=3601').ok).toBe(false);
    expect(validate('fraction=0.5', 'fraction=0.3').ok).toBe(true); // 1200 + 38400 <= 51200
    const tooMuch = validate('fraction=0.5', 'fraction=0.45');
    expect(!tooMuch.ok && tooMuch.error).toContain('SUMMARY_TRIGGER fraction=0.5 fires at 64000 tokens');
  });

  it('rejects a trigger the summary cap alone reaches', () => {
    const result = validate('tokens=1000', 'messages=2');
    expect(!result.ok && result.error).toContain('SUMMARY_MAX_TOKENS=1200');
  });

  it('checks a messages trigger against the kept messages', () => {
    expect(validate('messages=100', 'messages=12').ok).toBe(true);
    expect(validate('messages=15', 'messages=12').ok).toBe(true);
    const close = validate('messages=14', 'messages=12');
    expect(!close.ok && close.error).toContain('at most 11');
    const tokens = validate('messages=100', 'tokens=2000');
    expect(!tokens.ok && tokens.error).toContain('needs SUMMARY_KEEP=messages=N with N <= 80');
  });

  it('rejects a kept window that would not fit the pack budget', () => {
    const small = getModelProfile('custom', { maxInputTokens: 8000, reservedOutputTokens: 4000 });
    const result = validatePolicies({ trigger: trigger('tokens=100000'), keep: keep('tokens=5000'), profile: small });
    expect(!result.ok && result.error).toContain('exceeds the pack budget of 4000');
  });

  it('requires the summarizer input to hold twice the summary cap', () => {
    const result = validate(DEFAULT_TRIGGER, DEFAULT_KEEP, { summarizerInputMaxTokens: 2000 });
    expect(!result.ok && result.error).toContain('SUMMARY_INPUT_MAX_TOKENS=2000 must be at least twice');
    expect(validate(DEFAULT_TRIGGER, DEFAULT_KEEP, { summarizerInputMaxTokens: 2400 }).ok).toBe(true);
  });

  it('reports every problem at once', () => {
    const result = validate('tokens=1000,messages=5', 'tokens=900', { summarizerInputMaxTokens: 100 });
    expect(!result.ok && result.error.split('; ')).toHaveLength(3);
  });
});
