import { createHmac, timingSafeEqual } from 'node:crypto';

/** The prefix of a response id, as OpenAI's. */
export const RESPONSE_ID_PREFIX = 'resp_';

/** Hex characters of a response id's signature. */
const SIGNATURE_HEX = 32;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The key signing response ids, derived from AUTH_SECRET (never the secret itself). */
export function responseIdKey(authSecret: string): Buffer {
  return createHmac('sha256', authSecret).update('split-context-chat/openai-response-ids/v1').digest();
}

const hexOf = (uuid: string) => uuid.replace(/-/g, '');

/** The character after the turn in an id: whether the Response may be fetched later (`store`). */
const STORED = '1';
const NOT_STORED = '0';

function signatureOf(key: Buffer, userId: string, turnId: string, stored: string): string {
  return createHmac('sha256', key).update(`${userId}\n${turnId}\n${stored}`).digest('hex').slice(0, SIGNATURE_HEX);
}

/**
 * The id of a response: the turn that answered it (a thread and the answer it produced) and whether it was stored
 * (`store`, default true), signed for its user, so an id is only ever read back for the user it was given to and
 * cannot be made up from a turn id nor turned into a stored one.
 */
export function responseIdOf(key: Buffer, userId: string, turnId: string, options: { stored?: boolean } = {}): string {
  const stored = options.stored === false ? NOT_STORED : STORED;
  return `${RESPONSE_ID_PREFIX}${hexOf(turnId)}${stored}${signatureOf(key, userId, turnId, stored)}`;
}

/**
 * The turn a stored response's id names for this user, or null: malformed, tampered, another user's, or a response
 * made with `store: false` (its transcript is kept, but the Response cannot be fetched or continued, as on OpenAI).
 */
export function turnOfResponseId(key: Buffer, userId: string, id: string): string | null {
  if (!id.startsWith(RESPONSE_ID_PREFIX)) return null;
  const body = id.slice(RESPONSE_ID_PREFIX.length);
  if (!/^[0-9a-f]+$/.test(body) || body.length !== 33 + SIGNATURE_HEX) return null;
  const turnId = uuidOfHex(body.slice(0, 32));
  const stored = body.slice(32, 33);
  if (!turnId || stored !== STORED) return null;
  const expected = Buffer.from(signatureOf(key, userId, turnId, stored));
  const given = Buffer.from(body.slice(33));
  return timingSafeEqual(expected, given) ? turnId : null;
}

/** The prefix of a conversation id, as OpenAI's. */
export const CONVERSATION_ID_PREFIX = 'conv_';

/** A thread as a Conversations API id (who may reach it is the thread's owner, checked where it is read). */
export const conversationIdOf = (threadId: string) => `${CONVERSATION_ID_PREFIX}${hexOf(threadId)}`;

/** The thread a conversation id names, or null when it is malformed. */
export function threadOfConversationId(id: string): string | null {
  if (!id.startsWith(CONVERSATION_ID_PREFIX)) return null;
  return uuidOfHex(id.slice(CONVERSATION_ID_PREFIX.length));
}

function uuidOfHex(hex: string): string | null {
  if (!/^[0-9a-f]{32}$/.test(hex)) return null;
  const uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return UUID.test(uuid) ? uuid : null;
}

/** The id of the message item of a response's answer. */
export const messageItemIdOf = (turnId: string) => `msg_${hexOf(turnId)}`;

/** The id of a function_call item (its call_id is the model's call id). */
export const functionCallItemIdOf = (callId: string) => `fc_${callId.replace(/[^A-Za-z0-9_-]/g, '')}`;
