import { createHmac, timingSafeEqual } from 'node:crypto';

/** Headers of a signed tool webhook (both directions: run requests to runners, callbacks to this server). */
export const TIMESTAMP_HEADER = 'x-tool-timestamp';
export const SIGNATURE_HEADER = 'x-tool-signature';

/** How far a request's timestamp may be from now. */
export const SIGNATURE_TOLERANCE_MS = 5 * 60_000;

/** The prefix of a runner-protocol-v2 signature (`v2=<hex>`). */
export const SIGNATURE_PREFIX = 'v2=';
/** The prefix protocol v1 used (an HMAC over timestamp and body only): refused with a message saying so. */
const LEGACY_PREFIX = 'sha256=';

/** What a signature covers besides the secret: which request, for which run, with which bytes. */
export interface SignedRequest {
  /** Unix milliseconds. */
  timestamp: number;
  /** `POST`. */
  method: string;
  /** The URL's path as the sender posts to it (e.g. `/api/tool-runs/<runId>/result`), without the query. */
  path: string;
  runId: string;
  body: string | Buffer;
}

/**
 * `v2=` + hex HMAC-SHA256 under the secret of `v2\n<timestamp>\n<METHOD>\n<path>\n<runId>\n<raw body>`: a captured
 * request cannot be replayed to another route or posted into another run (protocol v1 signed `<timestamp>.<body>`).
 */
export function signWebhook(input: SignedRequest & { secret: string }): string {
  const hmac = createHmac('sha256', input.secret);
  hmac.update(`v2\n${input.timestamp}\n${input.method.toUpperCase()}\n${input.path}\n${input.runId}\n`);
  hmac.update(input.body);
  return `${SIGNATURE_PREFIX}${hmac.digest('hex')}`;
}

/** The headers of a signed JSON request, timestamped now. */
export function signedHeaders(
  secret: string,
  request: Omit<SignedRequest, 'timestamp' | 'body'> & { body: string },
  now = Date.now(),
): Record<string, string> {
  return {
    'content-type': 'application/json',
    [TIMESTAMP_HEADER]: String(now),
    [SIGNATURE_HEADER]: signWebhook({ secret, timestamp: now, ...request }),
  };
}

export type SignatureCheck = { ok: true; signature: string } | { ok: false; reason: string };

/**
 * Checks a signed request: both headers present, the timestamp within SIGNATURE_TOLERANCE_MS of now, the v2 HMAC
 * over method, path, run id and the raw body equal (compared in constant time). A protocol-v1 signature is refused
 * with a reason naming the change. Replays are refused by the caller, which remembers accepted signatures.
 */
export function verifyWebhook(
  input: Omit<SignedRequest, 'timestamp'> & {
    secret: string;
    timestamp: string | undefined;
    signature: string | undefined;
    now?: number;
  },
): SignatureCheck {
  if (!input.timestamp || !input.signature)
    return { ok: false, reason: `the ${TIMESTAMP_HEADER} and ${SIGNATURE_HEADER} headers are required` };
  if (input.signature.startsWith(LEGACY_PREFIX)) {
    return {
      ok: false,
      reason: `a runner protocol v1 signature (${LEGACY_PREFIX}) is no longer accepted; sign with protocol v2 (${SIGNATURE_PREFIX}, over method, path, run id and body; see the README's runner protocol)`,
    };
  }
  const timestamp = Number(input.timestamp);
  if (!Number.isSafeInteger(timestamp)) return { ok: false, reason: `${TIMESTAMP_HEADER} must be Unix milliseconds` };
  if (Math.abs((input.now ?? Date.now()) - timestamp) > SIGNATURE_TOLERANCE_MS)
    return { ok: false, reason: 'the request is too old (or from the future)' };
  const expected = Buffer.from(
    signWebhook({
      secret: input.secret,
      timestamp,
      method: input.method,
      path: input.path,
      runId: input.runId,
      body: input.body,
    }),
  );
  const given = Buffer.from(input.signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, reason: 'the signature does not match' };
  return { ok: true, signature: input.signature };
}
