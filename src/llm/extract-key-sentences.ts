/**
 * Extractive summarizing for the offline model: keep the sentences that carry names, numbers and
 * identifiers, verbatim, within a token budget. Deterministic, no model involved.
 */
import { countTextTokens } from './count-chat-tokens.js';

/** One sentence of the material, with the speaker label of its line when there is one. */
export interface ScoredSentence {
  text: string;
  /** Position in the material: ties and the final order follow it. */
  position: number;
  score: number;
}

const IDENTIFIER_PATTERNS: Array<{ pattern: RegExp; weight: number }> = [
  { pattern: /\bhttps?:\/\/[^\s)>\]]+/g, weight: 3 },
  { pattern: /\b[\w.+-]+@[\w-]+\.[\w.-]+\b/g, weight: 3 },
  // Paths: a/b, ./x, /usr/lib, C:\dir
  { pattern: /(?:^|\s)(?:~|\.{1,2})?\/?[\w.-]+(?:[/\\][\w.-]+)+/g, weight: 2 },
  // Anything with a digit: numbers, amounts, versions, codes like ORD-1234 or #42.
  { pattern: /#?\b[\w$€£-]*\d[\w.,:%/-]*/g, weight: 2 },
  // snake_case, kebab-case, camelCase, ACRONYMS, `code`
  { pattern: /\b[a-z]+(?:[_-][a-z0-9]+)+\b/g, weight: 2 },
  { pattern: /\b[a-z]+[A-Z][A-Za-z0-9]*\b/g, weight: 2 },
  { pattern: /\b[A-Z]{2,}[A-Z0-9]*\b/g, weight: 2 },
  { pattern: /`[^`]+`|"[^"]{2,60}"/g, weight: 1 },
];

const SPEAKER_LABEL = /^((?:\[[^\]]{1,20}\]\s*)?(?:user|assistant|tool|system|human|ai)\s*(?:\([^)]{0,40}\))?\s*:)\s*/i;
const BULLET = /^\s*(?:[-*•]|\d+[.)])\s+/;
const MAX_SENTENCE_CHARS = 300;

/** Capitalized words after the first one of a sentence: cheap proper-name detection. */
function countProperNames(sentence: string): number {
  const words = sentence.split(/\s+/).slice(1);
  return words.filter((word) => /^[A-Z][a-z]+(?:[''][a-z]+)?[,.;:!?]?$/.test(word)).length;
}

/** How much a sentence is worth keeping: identifiers and proper names, 0 when none. */
export function scoreSentence(sentence: string): number {
  let score = 0;
  const body = sentence.replace(SPEAKER_LABEL, '');
  for (const { pattern, weight } of IDENTIFIER_PATTERNS) score += (body.match(pattern)?.length ?? 0) * weight;
  return score + countProperNames(body);
}

/** The distinct identifiers of a text (numbers, codes, URLs, paths, names), in order of appearance. */
export function extractIdentifiers(text: string): string[] {
  const found: Array<{ value: string; at: number }> = [];
  for (const { pattern } of IDENTIFIER_PATTERNS) {
    for (const match of text.matchAll(pattern))
      found.push({ value: match[0].trim().replace(/[.,:;]+$/, ''), at: match.index ?? 0 });
  }
  found.sort((a, b) => a.at - b.at);
  return [...new Set(found.map((item) => item.value).filter((value) => value.length > 1))];
}

function truncate(sentence: string): string {
  return sentence.length <= MAX_SENTENCE_CHARS ? sentence : `${sentence.slice(0, MAX_SENTENCE_CHARS - 1).trimEnd()}…`;
}

/**
 * Splits material into sentences. Lines are split first; a line's speaker label ("user:") is
 * carried to each of its sentences so attribution survives; bullets are dropped.
 */
export function splitSentences(material: string): string[] {
  const sentences: string[] = [];
  for (const rawLine of material.split(/\r?\n/)) {
    const line = rawLine.replace(BULLET, '').trim();
    if (line.length === 0) continue;
    const label = SPEAKER_LABEL.exec(line)?.[1];
    const body = label ? line.slice(line.indexOf(label) + label.length).trim() : line;
    for (const part of body.split(/(?<=[.!?])\s+(?=[A-Z0-9"'([])/)) {
      const sentence = part.trim();
      if (sentence.length > 0) sentences.push(truncate(label ? `${label} ${sentence}` : sentence));
    }
  }
  return sentences;
}

function normalize(sentence: string): string {
  return sentence.toLowerCase().replace(/\s+/g, ' ').trim();
}

/**
 * The sentences to keep, in material order: every sentence with an identifier or a name, the
 * highest-scoring (then newest) first when they exceed `maxTokens`. Without any such sentence,
 * the first sentences are kept instead. Duplicates (e.g. re-fed summary lines) are kept once.
 */
export function selectKeySentences(options: {
  material: string;
  maxTokens: number;
  lineCost?: (sentence: string) => number;
}): string[] {
  const cost = options.lineCost ?? ((sentence: string) => countTextTokens(`- ${sentence}\n`));
  const seen = new Set<string>();
  const sentences: ScoredSentence[] = [];
  for (const text of splitSentences(options.material)) {
    const key = normalize(text);
    if (seen.has(key)) continue;
    seen.add(key);
    sentences.push({ text, position: sentences.length, score: scoreSentence(text) });
  }
  const withIdentifiers = sentences.filter((sentence) => sentence.score > 0);
  const candidates =
    withIdentifiers.length > 0
      ? [...withIdentifiers].sort((a, b) => b.score - a.score || b.position - a.position)
      : sentences;
  const kept: ScoredSentence[] = [];
  let used = 0;
  for (const sentence of candidates) {
    const tokens = cost(sentence.text);
    if (used + tokens > options.maxTokens) continue;
    kept.push(sentence);
    used += tokens;
  }
  return kept.sort((a, b) => a.position - b.position).map((sentence) => sentence.text);
}
