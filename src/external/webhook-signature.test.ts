import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhook } from './webhook-signature';

const secret = 's'.repeat(32);
const runId = '2b0c7c8e-3f5d-4c1a-9a57-1f2e3d4c5b6a';
const request = { method: 'POST', path: `/api/tool-runs/${runId}/result`, runId };

describe('tool webhook signatures (runner protocol v2)', () => {
  it('is "v2=" + the HMAC-SHA256 of "v2\\n<timestamp>\\n<METHOD>\\n<path>\\n<runId>\\n<raw body>"', () => {
    const body = '{"progress":0.5}';
    const expected = createHmac('sha256', secret)
      .update(`v2\n1700000000000\nPOST\n${request.path}\n${runId}\n${body}`)
      .digest('hex');
    expect(signWebhook({ secret, timestamp: 1700000000000, ...request, body })).toBe(`v2=${expected}`);
  });

  it('accepts a fresh signature over the same request and bytes, and nothing else', () => {
    const now = 1_800_000_000_000;
    const body = Buffer.from('{"status":"succeeded","result":"ok"}');
    const signature = signWebhook({ secret, timestamp: now, ...request, body });
    const check = (overrides: Partial<Parameters<typeof verifyWebhook>[0]>) =>
      verifyWebhook({ secret, timestamp: String(now), signature, ...request, body, now, ...overrides });
    expect(check({ now: now + 1000 })).toEqual({ ok: true, signature });
    expect(check({ body: Buffer.from('{"status":"succeeded","result":"ok" }') }).ok).toBe(false);
    expect(check({ secret: 't'.repeat(32) }).ok).toBe(false);
    expect(check({ now: now + 6 * 60_000 })).toEqual({
      ok: false,
      reason: 'the request is too old (or from the future)',
    });
    expect(check({ timestamp: undefined }).ok).toBe(false);
    expect(check({ timestamp: 'yesterday' }).ok).toBe(false);
    expect(check({ signature: 'v2=00' }).ok).toBe(false);
    // The same bytes for another run, another route or another method do not verify: no cross-run replay.
    const otherRun = '9d8e7f6a-5b4c-4d3e-8f2a-1b0c9d8e7f6a';
    expect(check({ runId: otherRun, path: `/api/tool-runs/${otherRun}/result` }).ok).toBe(false);
    expect(check({ runId: otherRun }).ok).toBe(false);
    expect(check({ path: `/api/tool-runs/${runId}/progress` }).ok).toBe(false);
    expect(check({ method: 'PUT' }).ok).toBe(false);
  });

  it('refuses a protocol-v1 signature (timestamp and body only) with a reason that names the change', () => {
    const now = 1_800_000_000_000;
    const body = '{"progress":0.5}';
    const legacy = `sha256=${createHmac('sha256', secret).update(`${now}.${body}`).digest('hex')}`;
    const check = verifyWebhook({
      secret,
      timestamp: String(now),
      signature: legacy,
      ...request,
      body: Buffer.from(body),
      now,
    });
    expect(check.ok).toBe(false);
    expect(!check.ok && check.reason).toMatch(
      /protocol v1 signature \(sha256=\) is no longer accepted; sign with protocol v2/,
    );
  });
});
