import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhook } from './webhook-signature';

const secret = 's'.repeat(32);

describe('tool webhook signatures', () => {
  it('is the HMAC-SHA256 of "<timestamp>.<raw body>"', () => {
    const body = '{"progress":0.5}';
    expect(signWebhook({ secret, timestamp: 1700000000000, body })).toBe(`sha256=${createHmac('sha256', secret).update(`1700000000000.${body}`).digest('hex')}`);
  });

  it('accepts a fresh signature over the same bytes, and nothing else', () => {
    const now = 1_800_000_000_000;
    const body = Buffer.from('{"status":"succeeded","result":"ok"}');
    const signature = signWebhook({ secret, timestamp: now, body });
    expect(verifyWebhook({ secret, timestamp: String(now), signature, body, now: now + 1000 })).toEqual({ ok: true, signature });
    expect(verifyWebhook({ secret, timestamp: String(now), signature, body: Buffer.from('{"status":"succeeded","result":"ok" }'), now }).ok).toBe(false);
    expect(verifyWebhook({ secret: 't'.repeat(32), timestamp: String(now), signature, body, now }).ok).toBe(false);
    expect(verifyWebhook({ secret, timestamp: String(now), signature, body, now: now + 6 * 60_000 })).toEqual({ ok: false, reason: 'the request is too old (or from the future)' });
    expect(verifyWebhook({ secret, timestamp: undefined, signature, body, now }).ok).toBe(false);
    expect(verifyWebhook({ secret, timestamp: 'yesterday', signature, body, now }).ok).toBe(false);
    expect(verifyWebhook({ secret, timestamp: String(now), signature: 'sha256=00', body, now }).ok).toBe(false);
  });
});
