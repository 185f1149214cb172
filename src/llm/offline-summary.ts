/**
 * The offline summarizer's text: an extractive summary of what people wrote. It reads the conversation's messages
 * out of whatever summarizer prompt it is given (transcript lines `[#12] user: …`, an earlier summary's bullets to
 * rewrite, condense or consolidate) and keeps their most informative sentences verbatim, each with the seq it came
 * from, within a token cap. It never keeps the prompt's instructions, headings or identifier lists, nor the offline
 * model's own answers (bookkeeping such as "My context: 13 messages, 632 tokens"), nor tool calls and results.
 * Deterministic, no model involved.
 */
import { OFFLINE_ANSWER_PREFIX } from '../core/context/build-recall-slot.js';
import { countTextTokens } from './count-chat-tokens.js';

const IDENTIFIER_PATTERNS: Array<{ pattern: RegExp; weight: number }> = [
  { pattern: /\bhttps?:\/\/[^\s)>\]]+/g, weight: 3 },
  { pattern: /\b[\w.+-]+@[\w-]+\.[\w.-]+\b/g, weight: 3 },
  // Paths: a/b, ./x, /usr/lib, C:\dir
  { pattern: /(?:^|\s)(?:~|\.{1,2})?\/?[\w.-]+(?:[/\\][\w.-]+)+/g, weight: 2 },
  // Anything with a digit: numbers, amounts, versions, codes like ORD-1234 (a citation like [#42] is not one).
  { pattern: /(?<!\[#?)\b[\w$€£-]*\d[\w.,:%/-]*/g, weight: 2 },
  // snake_case, kebab-case, camelCase, ACRONYMS, `code`
  { pattern: /\b[a-z]+(?:[_-][a-z0-9]+)+\b/g, weight: 2 },
  { pattern: /\b[a-z]+[A-Z][A-Za-z0-9]*\b/g, weight: 2 },
  { pattern: /\b[A-Z]{2,}[A-Z0-9]*\b/g, weight: 2 },
  { pattern: /`[^`]+`|"[^"]{2,60}"/g, weight: 1 },
  // Amounts of money weigh more than a bare number.
  {
    pattern: /[$€£]\s?\d|\b\d[\d,.]*\s?(?:k|m)?\s?(?:EUR|USD|GBP|CHF|euros?|dollars?|pounds?)\b/gi,
    weight: 2,
  },
];

/** Capitalized words after the first one of a sentence: cheap proper-name detection. */
function countProperNames(sentence: string): number {
  const words = sentence.split(/\s+/).slice(1);
  return words.filter((word) => /^[A-Z][a-z]+(?:['’][a-z]+)?[,.;:!?]?$/.test(word)).length;
}

/** How much a sentence is worth keeping: its identifiers and proper names. */
function identifierScore(sentence: string): number {
  let score = 0;
  for (const { pattern, weight } of IDENTIFIER_PATTERNS) score += (sentence.match(pattern)?.length ?? 0) * weight;
  return score + countProperNames(sentence);
}

/** One sentence the summary may keep. */
interface Candidate {
  /** The sentence as the summary shows it (an earlier summary's line keeps its citation in it). */
  text: string;
  /** Where it stands in the material: ties and the final order follow it. */
  position: number;
  score: number;
}

/** A conversation message found in the material, or an earlier summary's line. */
interface Source {
  role: 'user' | 'assistant' | 'other' | 'summary';
  seq?: number;
  lines: string[];
}

/** `[#12] user: text` (renderTranscriptLine); tool results and calls are recognised apart. */
const TRANSCRIPT_LINE = /^\[#(\d+)\] (user|assistant|system): ?(.*)$/;
const TOOL_LINE = /^\[#(\d+)\] (?:tool result|assistant called)\b/;
/** `user: text` (a message of a prompt given as separate messages, or an old summary's bullet). */
const LABELLED_LINE = /^(user|assistant|human|ai|tool|system)\s*:\s*(.*)$/i;
const BULLET = /^\s*(?:[-*•]|\d+[.)])\s+/;
const CITATION_AT_END = /\s*\[#\d+(?:\s*[–-]\s*#?\d+)?\]\s*$/;
/** A line that introduces a part of the prompt: "Previous summary:", "New messages (#5 to #13):". */
const HEADING = /^[^.!?]{0,60}:$/;
/** The summary heading of this summarizer's earlier versions, and what those versions kept of offline answers. */
const OLD_HEADER = /^Summary \(offline model, extractive\):$/;
const BOOKKEEPING = /\bMy context: \d+ messages\b|\[offline model\]/;
/** Words that mark a decision, a commitment or a constraint: what a summary is for. */
const CUES =
  /\b(?:decided|decide|chose|chosen|picked|booked|confirmed|agreed|settled|prefer|prefers|need|needs|must|budget|deadline|shortlist|caterer|venue|dates?|headcount|cost|costs|price|against|instead)\b/gi;
const MIN_WORDS = 4;
const MAX_SENTENCE_CHARS = 300;
/** Said when the material holds nothing to keep (a summary is never empty). */
export const NOTHING_TO_KEEP = 'Nothing worth keeping was said in these messages.';

function words(text: string): number {
  return text.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word)).length;
}

function truncate(sentence: string): string {
  return sentence.length <= MAX_SENTENCE_CHARS ? sentence : `${sentence.slice(0, MAX_SENTENCE_CHARS - 1).trimEnd()}…`;
}

function normalize(text: string): string {
  return text
    .replace(CITATION_AT_END, '')
    .replace(/^assistant:\s*/i, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

/** The material's messages and loose lines, in order. */
function sourcesOf(lines: readonly string[]): Source[] {
  const sources: Source[] = [];
  let message: Source | null = null;
  for (const line of lines) {
    const tool = TOOL_LINE.exec(line);
    const transcript = TRANSCRIPT_LINE.exec(line);
    if (tool || transcript) {
      const role = tool ? 'other' : transcript?.[2] === 'system' ? 'other' : (transcript?.[2] as 'user' | 'assistant');
      message = { role, seq: Number((tool ?? transcript)?.[1]), lines: transcript ? [transcript[3] ?? ''] : [] };
      sources.push(message);
    } else if (message) {
      // A message's further lines, up to the next transcript line (the prompt's closing lines state the cap).
      message.lines.push(line);
    } else {
      const body = line.replace(BULLET, '').trim();
      const labelled = LABELLED_LINE.exec(body);
      const role = labelled?.[1]?.toLowerCase();
      if (!labelled) sources.push({ role: 'summary', lines: [body] });
      else if (role === 'user' || role === 'human') sources.push({ role: 'user', lines: [labelled[2] ?? ''] });
      else if (role === 'assistant' || role === 'ai') sources.push({ role: 'assistant', lines: [labelled[2] ?? ''] });
    }
  }
  return sources;
}

/** A message's sentences; lines and bullets are sentences of their own. */
function sentencesOf(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.replace(BULLET, '').trim())
    .flatMap((line) => line.split(/(?<=[.!?])\s+(?=[A-Z0-9"'([])/))
    .map((sentence) => sentence.trim());
}

/** A sentence worth a bullet: four words or more, not a heading, a marker or bookkeeping. */
function keepable(sentence: string): boolean {
  return (
    words(sentence.replace(CITATION_AT_END, '')) >= MIN_WORDS &&
    !HEADING.test(sentence) &&
    !sentence.startsWith('[…') &&
    !OLD_HEADER.test(sentence) &&
    !BOOKKEEPING.test(sentence)
  );
}

function score(sentence: string): number {
  // Questions ask rather than settle: kept only where room is left.
  if (/\?\s*$/.test(sentence.replace(CITATION_AT_END, ''))) return 0;
  const body = sentence.replace(CITATION_AT_END, '').replace(/^assistant:\s*/i, '');
  return identifierScore(body) + 2 * (body.match(CUES)?.length ?? 0);
}

/** The candidates of the material: sentences of user and (not offline) assistant messages, an earlier summary's lines. */
function candidatesOf(lines: readonly string[]): Candidate[] {
  const seen = new Set<string>();
  const candidates: Candidate[] = [];
  const add = (text: string) => {
    const key = normalize(text);
    if (seen.has(key)) return;
    seen.add(key);
    candidates.push({ text, position: candidates.length, score: score(text) });
  };
  for (const source of sourcesOf(lines)) {
    const text = source.lines.join('\n').trim();
    if (source.role === 'other' || text === '') continue;
    if (source.role === 'assistant' && text.startsWith(OFFLINE_ANSWER_PREFIX)) continue;
    if (source.role === 'summary') {
      if (keepable(text)) add(truncate(text));
      continue;
    }
    const label = source.role === 'assistant' ? 'assistant: ' : '';
    const citation = source.seq !== undefined ? ` [#${source.seq}]` : '';
    for (const sentence of sentencesOf(text)) {
      if (keepable(sentence)) add(`${label}${truncate(sentence)}${citation}`);
    }
  }
  return candidates;
}

/**
 * The summary of `material` (the prompt's messages after its instructions, one text; lines stating the cap already
 * removed) within `maxTokens`: one bullet a kept sentence, in material order; the highest-scoring (names, numbers,
 * identifiers, decisions), then the newest, first when they do not all fit; sentences with none of those only when
 * no sentence has one.
 */
export function offlineSummary(material: string, maxTokens: number): string {
  const candidates = candidatesOf(material.split(/\r?\n/));
  // Small talk and questions only where nothing carries a name, a number or a decision.
  const informative = candidates.filter((candidate) => candidate.score > 0);
  const ranked = (informative.length > 0 ? informative : candidates).sort(
    (a, b) => b.score - a.score || b.position - a.position,
  );
  const kept: Candidate[] = [];
  let used = 0;
  for (const candidate of ranked) {
    const tokens = countTextTokens(`- ${candidate.text}\n`);
    if (used + tokens > maxTokens) continue;
    kept.push(candidate);
    used += tokens;
  }
  if (kept.length === 0) return `- ${NOTHING_TO_KEEP}`;
  return kept
    .sort((a, b) => a.position - b.position)
    .map((candidate) => `- ${candidate.text}`)
    .join('\n');
}
