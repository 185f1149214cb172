import { AppError } from '../core/errors/app-error';

const ESCAPE = Buffer.from('\\u0000');
const BACKSLASH = 0x5c;
const QUOTE = 0x22;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const COMMA = 0x2c;

/**
 * How deep any JSON body here may nest arrays and objects. The deepest the API documents are a tool's JSON schema
 * inside a `/v1` request (a dozen levels); a body nested 500,000 levels deep (1 MB of `[`) held the event loop for
 * over 200 ms in `JSON.parse` and whatever walks the result.
 */
export const MAX_JSON_DEPTH = 128;

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

/**
 * Whether a JSON body nests arrays or objects more than `maxDepth` levels deep: one pass over the raw bytes, skipping
 * strings (brackets inside them are text), before any parsing. Malformed JSON is left to the parser to refuse.
 */
export function nestsDeeperThan(body: Buffer, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let at = 0; at < body.length; at += 1) {
    const byte = body[at];
    if (inString) {
      if (byte === BACKSLASH) at += 1;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
      depth -= 1;
    }
  }
  return false;
}

/**
 * How many members one JSON object here may hold. The widest the API documents are a tool schema's `properties` and
 * a request's `metadata` (tens); a 1 MB object of 62,500 members held the event loop ~150 ms in `JSON.parse`, the
 * schema's copy of its unknown keys and a spread of it (the hostile-server reliability test). Arrays are not bounded
 * here (their routes bound their items).
 */
export const MAX_JSON_OBJECT_MEMBERS = 10_000;

/**
 * Whether a JSON body has an object of more than `maxMembers` members: one pass over the raw bytes, counting the
 * commas directly inside each object (strings skipped), before any parsing. Malformed JSON is left to the parser.
 */
export function hasObjectWiderThan(body: Buffer, maxMembers: number): boolean {
  // Per open container: -1 for an array, else the commas seen directly inside the object so far.
  const open: number[] = [];
  let inString = false;
  for (let at = 0; at < body.length; at += 1) {
    const byte = body[at];
    if (inString) {
      if (byte === BACKSLASH) at += 1;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACE) {
      open.push(0);
    } else if (byte === OPEN_BRACKET) {
      open.push(-1);
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      open.pop();
    } else if (byte === COMMA && open.length > 0) {
      const commas = open[open.length - 1]!;
      if (commas >= 0) {
        if (commas + 2 > maxMembers) return true;
        open[open.length - 1] = commas + 1;
      }
    }
  }
  return false;
}

/**
 * Body-parser's `verify` hook for every JSON body: throws VALIDATION when it holds a NUL character, nests deeper
 * than {@link MAX_JSON_DEPTH} or has an object wider than {@link MAX_JSON_OBJECT_MEMBERS}, before it is parsed.
 */
export function checkJsonBody(body: Buffer): void {
  if (hasNulEscape(body)) {
    throw new AppError('VALIDATION', 'The request holds a NUL character (\\u0000), which no text here can store.');
  }
  if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
    throw new AppError('VALIDATION', `The request's JSON nests deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  if (hasObjectWiderThan(body, MAX_JSON_OBJECT_MEMBERS)) {
    throw new AppError(
      'VALIDATION',
      `The request's JSON has an object of more than ${MAX_JSON_OBJECT_MEMBERS.toLocaleString('en')} members.`,
    );
  }
}
