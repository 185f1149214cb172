import { OFFLINE_ANSWER_PREFIX } from './build-recall-slot';
import type { ContextEntry } from './types';

// Cheap patterns, most specific first; a later pattern never re-reports text an earlier one took.
// Each runs in linear time: a pattern whose start could fall anywhere inside a run of the characters it scans
// (`a-a-a-…`, `1,1,1,…`) only starts at the first such character of the run (a short lookbehind), so a failing
// run is scanned once, not once per position (which was quadratic: seconds on 64K characters).
const PATTERNS: RegExp[] = [
  /\bhttps?:\/\/[^\s<>"'`)\]]+[^\s<>"'`)\].,;:!?]/g, // URLs
  /\b(?<!\w[.+-]*)[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/g, // e-mail addresses
  /(?:~|\.{1,2})?(?:\/[\w.@-]+){2,}\/?|\b[A-Za-z]:\\[\w\\.-]+/g, // file paths (POSIX with 2+ parts, Windows)
  /\b(?<!\w-*)[\w-]+\.(?:ts|tsx|js|json|md|py|go|rs|java|yml|yaml|toml|csv|txt|pdf|png|sql|sh)\b/g, // file names
  /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, // UUIDs
  /#\d+\b/g, // issue / order numbers like #123
  /\b[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)+\b/g, // codes like INV-2024-001 (must mix letters and digits: see below)
  /\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{5,}\b/g, // ids mixing letters and digits like a1b2c3d
  /[$€£]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn|million|billion))?\b/gi, // money
  /\b(?<![\d,])\d[\d,]*(?:\.\d+)?\s?(?:%|[kKMGT]?B\b|ms\b|s\b|min\b|h\b|days?\b|weeks?\b|months?\b|years?\b|k?m\b|cm\b|mm\b|kg\b|g\b|lbs?\b|°[CF]|tokens?\b|USD\b|EUR\b)/g, // numbers with units
  /\b\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}\b/g, // dates
  /\b\d{3,}(?:[.,]\d+)?\b/g, // long plain numbers
  /\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+\b/g, // multi-word proper names like Ada Lovelace
  /[A-Z](?<=[a-z,;:]\s+[A-Z])[a-z]{2,}\b/g, // a capitalised word inside a sentence (lookbehind only at capitals)
];

/** The codes pattern: kept only when the code mixes letters and digits (checked on the match, not by lookahead). */
const CODES = PATTERNS[6];
const HAS_DIGIT = /\d/;
const HAS_LETTER = /[A-Za-z]/;

/** Text beyond this many characters is not scanned: identifiers are a quality signal, not worth unbounded work. */
export const MAX_IDENTIFIER_SCAN_CHARS = 200_000;

/**
 * Identifiers worth keeping through a summary: URLs, e-mails, file paths and names, UUIDs, codes and ids, money,
 * numbers with units, dates, long numbers and capitalised proper names. Cheap regexes; unique, in order found.
 */
// Capitalised because they open a sentence, not because they are names.
const SENTENCE_STARTERS = new Set([
  'A',
  'An',
  'And',
  'Ask',
  'At',
  'But',
  'By',
  'Call',
  'Dear',
  'For',
  'From',
  'He',
  'Hello',
  'Hi',
  'I',
  'If',
  'In',
  'It',
  'Let',
  'My',
  'On',
  'Or',
  'Our',
  'Please',
  'See',
  'Send',
  'She',
  'So',
  'Tell',
  'That',
  'The',
  'Then',
  'These',
  'They',
  'This',
  'Those',
  'To',
  'Use',
  'We',
  'When',
  'With',
  'You',
  'Your',
]);

function withoutSentenceStarter(value: string): { value: string; skipped: number } {
  const [first, ...rest] = value.split(/\s+/);
  if (first === undefined || !SENTENCE_STARTERS.has(first) || rest.length === 0) return { value, skipped: 0 };
  const remaining = rest.join(' ');
  return { value: remaining, skipped: value.length - remaining.length };
}

export function extractIdentifiers(input: string): string[] {
  const text = input.length > MAX_IDENTIFIER_SCAN_CHARS ? input.slice(0, MAX_IDENTIFIER_SCAN_CHARS) : input;
  const found: { index: number; value: string }[] = [];
  // One flag a character: checking a match against what earlier patterns took costs its length, not the number
  // of matches so far (a text of 10,000 `#1`s made the old interval list quadratic too).
  const taken = new Uint8Array(text.length);
  const overlaps = (start: number, end: number): boolean => taken.subarray(start, end).includes(1);
  for (const pattern of PATTERNS) {
    for (const match of text.matchAll(pattern)) {
      if (pattern === CODES && !(HAS_DIGIT.test(match[0]) && HAS_LETTER.test(match[0]))) continue;
      const { value: trimmed, skipped } = withoutSentenceStarter(match[0].trim());
      const start = match.index + skipped;
      const end = match.index + match[0].length;
      if (trimmed === '' || overlaps(start, end)) continue;
      taken.fill(1, start, end);
      found.push({ index: start, value: trimmed });
    }
  }
  const unique = new Set(found.sort((a, b) => a.index - b.index).map((item) => item.value));
  return [...unique];
}

const PROPER_NAME = /^\p{Lu}\p{Ll}+(?:\s+\p{Lu}\p{Ll}+)*$/u;
const YEAR = /^(?:1[89]|20)\d\d$/;

/**
 * The identifiers a summary must keep verbatim, worth a second summarizer call when one is lost: everything
 * extractIdentifiers finds but capitalised names and bare years, which a summary may refer to in other words (and
 * which every turn of a chat between two named people with dated messages carries: re-asking for them after every
 * fold doubled the summarizer's calls and a fold's latency, measured on LoCoMo, bench/README.md).
 */
export function mustKeepVerbatim(identifier: string): boolean {
  return !PROPER_NAME.test(identifier) && !YEAR.test(identifier);
}

function normalize(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ');
}

export interface RetentionReport {
  /** Identifiers of the folded entries found in the summary. */
  kept: number;
  total: number;
  /** Identifiers the summary lost. */
  missing: string[];
  /** Those of `missing` a summary must keep verbatim (mustKeepVerbatim): what the identifier re-ask asks for. */
  missingVerbatim: string[];
}

/** How many identifiers of the folded entries the summary still contains (case- and whitespace-insensitive). */
export function checkRetention(options: { folded: readonly ContextEntry[]; summary: string }): RetentionReport {
  // The built-in offline model's answers restate the context (counts, token totals): nothing a summary must keep.
  const source = options.folded
    .filter((entry) => !(entry.role === 'assistant' && entry.content.startsWith(OFFLINE_ANSWER_PREFIX)))
    .map((entry) => [entry.content, ...(entry.toolCalls ?? []).map((call) => JSON.stringify(call.args))].join('\n'))
    .join('\n');
  const identifiers = extractIdentifiers(source);
  const summary = normalize(options.summary);
  const missing = identifiers.filter((identifier) => !summary.includes(normalize(identifier)));
  return {
    kept: identifiers.length - missing.length,
    total: identifiers.length,
    missing,
    missingVerbatim: missing.filter(mustKeepVerbatim),
  };
}
