import { z } from 'zod';
import type { TranscriptMessage } from '../../domain/types';
import { defineTool, type ToolContext } from '../types';

const PAGE = 200;
const STOP_WORDS = new Set(
  'the a an and or but of to in on at for with is are was were be been it this that these those i you he she we they me my your our their as by from not no do does did have has had will would can could should what which who how when where why there here so if then than too very just also into about over under more most some any all each other such only own same up down out off again'.split(
    ' ',
  ),
);

interface Stats {
  messages: number;
  byRole: Record<string, number>;
  wordsByRole: Record<string, number>;
  characters: number;
  tokens: number;
  longest: { seq: number | null; characters: number } | null;
  terms: Map<string, number>;
  identifiers: Set<string>;
  toolMessages: number;
  firstAt: Date | null;
  lastAt: Date | null;
}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

async function readTranscript(context: ToolContext, beforeSeq: number): Promise<TranscriptMessage[]> {
  const all: TranscriptMessage[] = [];
  let after = 0;
  for (;;) {
    const page = await context.services.listTranscript({ threadId: context.threadId, afterSeq: after, limit: PAGE });
    const usable = page.filter((message) => message.seq !== null && message.seq <= beforeSeq && !message.deleted);
    all.push(...usable);
    const last = page.at(-1)?.seq;
    if (page.length < PAGE || last === null || last === undefined || last >= beforeSeq) return all;
    after = last;
  }
}

function countWords(messages: TranscriptMessage[], stats: Stats): void {
  for (const message of messages) {
    const words = message.content.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? [];
    stats.wordsByRole[message.role] = (stats.wordsByRole[message.role] ?? 0) + words.length;
    for (const word of words)
      if (word.length > 2 && !STOP_WORDS.has(word) && !/^\d+$/.test(word))
        stats.terms.set(word, (stats.terms.get(word) ?? 0) + 1);
  }
}

function findIdentifiers(messages: TranscriptMessage[], stats: Stats): void {
  for (const message of messages) {
    for (const match of message.content.match(
      /\b(?:[A-Z]{2,}[-_]?\d+[\w-]*|https?:\/\/\S+|\d+(?:\.\d+)?\s?(?:ms|s|kb|mb|gb|%|km|kg))\b/g,
    ) ?? [])
      stats.identifiers.add(match);
  }
}

function render(stats: Stats, throughSeq: number): string {
  const roles = Object.entries(stats.byRole)
    .map(([role, count]) => `${role} ${count}`)
    .join(', ');
  const words = Object.entries(stats.wordsByRole)
    .map(([role, count]) => `${role} ${count}`)
    .join(', ');
  const terms = [...stats.terms.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 10);
  const identifiers = [...stats.identifiers].slice(0, 20);
  const span =
    stats.firstAt && stats.lastAt ? `${stats.firstAt.toISOString()} to ${stats.lastAt.toISOString()}` : 'n/a';
  return [
    `Thread analysis (messages #1 to #${throughSeq}):`,
    `- Messages: ${stats.messages} (${roles || 'none'}); tool results: ${stats.toolMessages}`,
    `- Words: ${words || 'none'}; characters: ${stats.characters}; tokens: ${stats.tokens}`,
    `- Longest message: ${stats.longest ? `#${stats.longest.seq} (${stats.longest.characters} characters)` : 'n/a'}`,
    `- Most frequent terms: ${terms.map(([term, count]) => `${term} (${count})`).join(', ') || 'none'}`,
    `- Identifiers seen: ${identifiers.join(', ') || 'none'}`,
    `- Time span: ${span}`,
  ].join('\n');
}

/** The longest pause between steps: the whole run stays under half a minute whatever the model asks for. */
export const MAX_ANALYSIS_PACE_MS = 5000;

/**
 * Statistics of the thread's own transcript, computed in the tools worker in five steps with progress
 * (`pace_ms` between steps, so a UI shows it working; tests make it short or long). The pause is bounded and the
 * tool has its own time limit: a user's request cannot hold a slot of the shared tools worker for minutes.
 */
export const analyzeThreadTool = defineTool({
  name: 'analyze_thread',
  shortDescription: 'Background statistics of this conversation (roles, terms, identifiers); the result comes later.',
  description:
    "Analyzes this conversation's full transcript in the background (counts per role, frequent terms, identifiers, longest message); the result arrives later.",
  schema: z.object({
    pace_ms: z
      .number()
      .int()
      .min(0)
      .max(MAX_ANALYSIS_PACE_MS)
      .default(800)
      .describe(`Pause between the five analysis steps, in ms (at most ${MAX_ANALYSIS_PACE_MS})`),
  }),
  mode: 'async',
  timeoutMs: 60_000,
  async run({ pace_ms: paceMs }, context) {
    const stats: Stats = {
      messages: 0,
      byRole: {},
      wordsByRole: {},
      characters: 0,
      tokens: 0,
      longest: null,
      terms: new Map(),
      identifiers: new Set(),
      toolMessages: 0,
      firstAt: null,
      lastAt: null,
    };
    await context.reportProgress(0.05, 'reading the transcript');
    const messages = await readTranscript(context, Number.MAX_SAFE_INTEGER);
    const throughSeq = messages.at(-1)?.seq ?? 0;
    await pause(paceMs, context.signal);
    await context.reportProgress(0.25, `read ${messages.length} messages; counting roles`);
    for (const message of messages) {
      stats.messages += 1;
      stats.byRole[message.role] = (stats.byRole[message.role] ?? 0) + 1;
      stats.characters += message.content.length;
      stats.tokens += message.tokens;
      if (message.role === 'tool') stats.toolMessages += 1;
      if (!stats.longest || message.content.length > stats.longest.characters)
        stats.longest = { seq: message.seq, characters: message.content.length };
      stats.firstAt ??= message.createdAt;
      stats.lastAt = message.createdAt;
    }
    await pause(paceMs, context.signal);
    await context.reportProgress(0.5, 'counting words');
    countWords(messages, stats);
    await pause(paceMs, context.signal);
    await context.reportProgress(0.75, 'looking for identifiers');
    findIdentifiers(messages, stats);
    await pause(paceMs, context.signal);
    await context.reportProgress(0.95, 'writing the report');
    return render(stats, throughSeq);
  },
});
