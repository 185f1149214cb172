import { describe, expect, it } from 'vitest';
import { renewDelayMs } from './guest-session';

describe('renewDelayMs', () => {
  const now = Date.parse('2026-01-01T00:00:00.000Z');
  const at = (secondsFromNow: number) => ({ userId: 'guest-1', token: 't', expiresAt: new Date(now + secondsFromNow * 1000).toISOString() });

  it('renews a minute before a long-lived token ends', () => {
    expect(renewDelayMs(at(30 * 86_400), now)).toBe(Math.min(2 ** 31 - 1, 30 * 86_400_000 - 60_000));
    expect(renewDelayMs(at(3600), now)).toBe(3600_000 - 60_000);
  });

  it('renews a short-lived token at four fifths of its life, and an expired or unknown one at once', () => {
    expect(renewDelayMs(at(10), now)).toBe(8000);
    expect(renewDelayMs(at(-5), now)).toBe(0);
    expect(renewDelayMs({ userId: 'guest-1', token: 't', expiresAt: null }, now)).toBe(0);
  });
});
