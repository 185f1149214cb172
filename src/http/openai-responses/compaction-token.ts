import { createHmac, timingSafeEqual } from 'node:crypto';

/** Hex characters of a compaction token's signature. */
const SIGNATURE_HEX = 32;

/** The version tag a compaction token starts with (a later format gets another). */
const VERSION = 'scc1';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The key signing compaction tokens, derived from AUTH_SECRET under its own label (never the secret itself). */
export function compactionKey(authSecret: string): Buffer {
  return createHmac('sha256', authSecret).update('split-context-chat/openai-compaction-items/v1').digest();
}

/** What a compaction item stands for: a thread's summary revision, as the thread stood through `atSeq`. */
export interface Compaction {
  threadId: string;
  /** The thread's summary revision when it was compacted (0: nothing folded yet, the window held it all). */
  revision: number;
  /** The thread's last seq when it was compacted: the items after the compaction item go on from there. */
  atSeq: number;
}

const hexOf = (uuid: string) => uuid.replace(/-/g, '');

function signatureOf(key: Buffer, userId: string, compaction: Compaction): string {
  return createHmac('sha256', key)
    .update(`${userId}\n${compaction.threadId}\n${compaction.revision}\n${compaction.atSeq}`)
    .digest('hex')
    .slice(0, SIGNATURE_HEX);
}

/**
 * A compaction item's `encrypted_content`: the thread, its summary revision and the seq it was compacted at, signed for
 * the user it is given to (opaque to clients, readable to us: the admin console shows the summary it stands for).
 */
export function compactionTokenOf(key: Buffer, userId: string, compaction: Compaction): string {
  const { threadId, revision, atSeq } = compaction;
  return `${VERSION}.${hexOf(threadId)}.${revision}.${atSeq}.${signatureOf(key, userId, compaction)}`;
}

/** Longest token read (a longer one is not ours). */
export const MAX_COMPACTION_TOKEN_CHARS = 200;

/** What a token says, for this user; null when it is malformed, tampered with, or another user's. */
export function compactionOfToken(key: Buffer, userId: string, token: string): Compaction | null {
  if (token.length > MAX_COMPACTION_TOKEN_CHARS) return null;
  const [version, threadHex, revisionText, atSeqText, signature, ...rest] = token.split('.');
  if (version !== VERSION || rest.length > 0 || !threadHex || !signature) return null;
  if (!/^(0|[1-9][0-9]{0,9})$/.test(revisionText ?? '') || !/^(0|[1-9][0-9]{0,9})$/.test(atSeqText ?? '')) return null;
  const threadId = uuidOfHex(threadHex);
  if (!threadId) return null;
  const compaction = { threadId, revision: Number(revisionText), atSeq: Number(atSeqText) };
  const expected = Buffer.from(signatureOf(key, userId, compaction));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given) ? compaction : null;
}

function uuidOfHex(hex: string): string | null {
  if (!/^[0-9a-f]{32}$/.test(hex)) return null;
  const uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return UUID.test(uuid) ? uuid : null;
}

/** A compaction output item, as OpenAI's (`cmp_…` id). */
export function compactionItem(key: Buffer, userId: string, compaction: Compaction) {
  return {
    type: 'compaction' as const,
    id: `cmp_${hexOf(compaction.threadId)}${compaction.revision.toString(16).padStart(8, '0')}`,
    encrypted_content: compactionTokenOf(key, userId, compaction),
  };
}
