import { AppError } from '../core/errors';

const ESCAPE = Buffer.from('\\u0000');
const BACKSLASH = 0x5c;

/**
 * Whether a JSON body holds a NUL character in a string. Postgres' text refuses `\u0000`, so such a message could
 * never be stored: it is refused up front (VALIDATION) instead of failing as INTERNAL halfway through a turn. JSON
 * can only carry NUL escaped, as `\u0000` (`\\u0000` is a backslash and the text "u0000": the escape counts only
 * after an even number of backslashes). One pass over the raw bytes, before parsing.
 */
export function hasNulEscape(body: Buffer): boolean {
  for (let at = body.indexOf(ESCAPE); at !== -1; at = body.indexOf(ESCAPE, at + 1)) {
    let backslashes = 0;
    while (at - backslashes - 1 >= 0 && body[at - backslashes - 1] === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return true;
  }
  return false;
}

/** Throws VALIDATION when a JSON body holds a NUL character (body-parser's `verify` hook). */
export function refuseNulEscapes(body: Buffer): void {
  if (hasNulEscape(body)) {
    throw new AppError('VALIDATION', 'The request holds a NUL character (\\u0000), which no text here can store.');
  }
}
