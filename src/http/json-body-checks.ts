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
 * The shape of a JSON body, from one pass over its raw bytes before any parsing, strings skipped (brackets and commas
 * inside them are text): whether it nests arrays or objects more than `maxDepth` levels deep (the pass stops there),
 * and whether an object holds more than `maxMembers` members (the commas directly inside it). Malformed JSON is left
 * to the parser to refuse.
 */
function scanJsonShape(body: Buffer, maxDepth: number, maxMembers: number): { deep: boolean; wide: boolean } {
  // Per open container: -1 for an array, else the commas seen directly inside the object so far.
  const open: number[] = [];
  let wide = false;
  let inString = false;
  for (let at = 0; at < body.length; at += 1) {
    const byte = body[at];
    if (inString) {
      if (byte === BACKSLASH) at += 1;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      open.push(byte === OPEN_BRACE ? 0 : -1);
      if (open.length > maxDepth) return { deep: true, wide };
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      open.pop();
    } else if (byte === COMMA && !wide && open.length > 0) {
      const commas = open[open.length - 1]!;
      if (commas >= 0) {
        open[open.length - 1] = commas + 1;
        wide = commas + 2 > maxMembers;
      }
    }
  }
  return { deep: false, wide };
}

/** Whether a JSON body nests arrays or objects more than `maxDepth` levels deep (see scanJsonShape). */
export function nestsDeeperThan(body: Buffer, maxDepth: number): boolean {
  return scanJsonShape(body, maxDepth, Infinity).deep;
}

/**
 * How many members one JSON object here may hold. The widest the API documents are a tool schema's `properties` and
 * a request's `metadata` (tens); a 1 MB object of 62,500 members held the event loop ~150 ms in `JSON.parse`, the
 * schema's copy of its unknown keys and a spread of it (the hostile-server reliability test). Arrays are not bounded
 * here (their routes bound their items).
 */
export const MAX_JSON_OBJECT_MEMBERS = 10_000;

/** Whether a JSON body has an object of more than `maxMembers` members (see scanJsonShape). */
export function hasObjectWiderThan(body: Buffer, maxMembers: number): boolean {
  return scanJsonShape(body, Infinity, maxMembers).wide;
}

/**
 * Body-parser's `verify` hook for every JSON body: throws VALIDATION when it holds a NUL character, nests deeper
 * than {@link MAX_JSON_DEPTH} or has an object wider than {@link MAX_JSON_OBJECT_MEMBERS}, before it is parsed.
 */
export function checkJsonBody(body: Buffer): void {
  if (hasNulEscape(body)) {
    throw new AppError('VALIDATION', 'The request holds a NUL character (\\u0000), which no text here can store.');
  }
  // One pass for both bounds; a body past both is refused for its depth, as when they were two passes.
  const shape = scanJsonShape(body, MAX_JSON_DEPTH, MAX_JSON_OBJECT_MEMBERS);
  if (shape.deep) {
    throw new AppError('VALIDATION', `The request's JSON nests deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  if (shape.wide) {
    throw new AppError(
      'VALIDATION',
      `The request's JSON has an object of more than ${MAX_JSON_OBJECT_MEMBERS.toLocaleString('en')} members.`,
    );
  }
}
