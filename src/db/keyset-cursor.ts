import { AppError } from '../core/errors/app-error';

/** A uuid's text form (ids in cursors and route parameters). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A page cursor over (a time desc, a uuid desc), opaque to clients. */
export interface KeysetCursor {
  at: Date;
  id: string;
}

export function encodeKeysetCursor(cursor: KeysetCursor): string {
  return Buffer.from(`${cursor.at.toISOString()}|${cursor.id}`).toString('base64url');
}

/** The refusal of a cursor this server did not hand out: a client error, never an internal one. */
export function invalidCursor(): AppError {
  return new AppError('VALIDATION', 'Invalid cursor: pass the nextCursor of the previous page unchanged.');
}

/** Decodes a cursor of `encodeKeysetCursor`; anything else is a VALIDATION error (400), not a database error. */
export function decodeKeysetCursor(cursor: string): KeysetCursor {
  const [at, id, ...rest] = Buffer.from(cursor, 'base64url').toString().split('|');
  const date = new Date(at ?? '');
  if (rest.length > 0 || !id || !UUID.test(id) || Number.isNaN(date.getTime())) throw invalidCursor();
  return { at: date, id };
}
