import { createHmac, timingSafeEqual } from 'node:crypto';

/** Headers of a signed tool webhook (both directions: run requests to runners, callbacks to this server). */
export const TIMESTAMP_HEADER = 'x-tool-timestamp';
export const SIGNATURE_HEADER = 'x-tool-signature';

/** How far a request's timestamp may be from now. */
export const SIGNATURE_TOLERANCE_MS = 5 * 60_000;

/** `sha256=` + hex HMAC-SHA256 of `<timestamp>.<raw body>` under the secret; the timestamp is Unix milliseconds. */
export function signWebhook(input: { secret: string; timestamp: number; body: string | Buffer }): string {
  const hmac = createHmac('sha256', input.secret);
  hmac.update(`${input.timestamp}.`);
  hmac.update(input.body);
  return `sha256=${hmac.digest('hex')}`;
}

/** The headers of a signed request with this body, timestamped now. */
export function signedHeaders(secret: string, body: string, now = Date.now()): Record<string, string> {
  return { 'content-type': 'application/json', [TIMESTAMP_HEADER]: String(now), [SIGNATURE_HEADER]: signWebhook({ secret, timestamp: now, body }) };
}

export type SignatureCheck = { ok: true; signature: string } | { ok: false; reason: string };

/**
 * Checks a signed request: both headers present, the timestamp within SIGNATURE_TOLERANCE_MS of now, the HMAC over
 * the raw body equal (compared in constant time). Replays are refused by the caller, which remembers signatures.
 */
export function verifyWebhook(input: { secret: string; timestamp: string | undefined; signature: string | undefined; body: Buffer; now?: number }): SignatureCheck {
  if (!input.timestamp || !input.signature) return { ok: false, reason: `the ${TIMESTAMP_HEADER} and ${SIGNATURE_HEADER} headers are required` };
  const timestamp = Number(input.timestamp);
  if (!Number.isSafeInteger(timestamp)) return { ok: false, reason: `${TIMESTAMP_HEADER} must be Unix milliseconds` };
  if (Math.abs((input.now ?? Date.now()) - timestamp) > SIGNATURE_TOLERANCE_MS) return { ok: false, reason: 'the request is too old (or from the future)' };
  const expected = Buffer.from(signWebhook({ secret: input.secret, timestamp, body: input.body }));
  const given = Buffer.from(input.signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'the signature does not match' };
  return { ok: true, signature: input.signature };
}
