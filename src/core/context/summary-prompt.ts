import type { ContextEntry } from './types';

/**
 * The summarizer's prompt, one file a deployment can replace. Placeholders: `{{maxTokens}}`, `{{fromSeq}}`,
 * `{{throughSeq}}`, `{{previousSummary}}`, `{{transcript}}`.
 */
export interface SummaryPromptTemplate {
  system: string;
  user: string;
}

/** The default template: intent, facts and decisions, artifacts and identifiers, open next steps, with citations. */
export const DEFAULT_SUMMARY_PROMPT: SummaryPromptTemplate = {
  system: [
    'You maintain the running summary of a conversation between a user and an AI assistant.',
    "The summary replaces the older messages in the assistant's context, so anything it leaves out is lost to the",
    'assistant. Update the previous summary with the new messages: keep what still matters, fold in what is new,',
    'drop what was superseded. Never invent anything.',
    '',
    'Write these sections, in this order:',
    '1. Intent: what the user is trying to achieve, and their preferences and constraints.',
    '2. Facts and decisions: what was established, decided or ruled out so far.',
    '3. Artifacts and identifiers: every id, number (with its unit), name, code, file path and URL that may be',
    '   needed again, copied exactly.',
    '4. Open next steps: questions and tasks not yet done.',
    '',
    'Cite the transcript messages each point comes from by their number, like [#12] or [#40–44]; only cite numbers',
    'from #{{fromSeq}} to #{{throughSeq}}.',
    'Hard limit: at most {{maxTokens}} tokens. Be terse; prefer lists.',
  ].join('\n'),
  user: [
    'Previous summary:',
    '{{previousSummary}}',
    '',
    'New messages (#{{fromSeq}} to #{{throughSeq}}):',
    '{{transcript}}',
    '',
    'Write the updated summary now (at most {{maxTokens}} tokens).',
  ].join('\n'),
};

/** The line that opens the earlier summary in a segment prompt: context for the summarizer, not material. */
export const EARLIER_SUMMARY_OPENING = 'Earlier summary (read-only: it stays as it is, do not repeat it):';
/** The line that closes the earlier summary in a segment prompt. */
export const EARLIER_SUMMARY_CLOSING = 'End of the earlier summary.';

/**
 * The default template of a segment: the summary is kept as ordered segments (a fold appends one, the earlier
 * ones stay byte-identical so a provider's prompt cache keeps them); the summarizer sees the earlier summary as
 * read-only context and writes only what the new messages add, change or settle. A thread's own summary prompt
 * replaces `system`, as for the rewriting template.
 */
export const DEFAULT_SEGMENT_PROMPT: SummaryPromptTemplate = {
  system: [
    'You maintain the running summary of a conversation between a user and an AI assistant, one segment at a time.',
    "The summary replaces the older messages in the assistant's context, so anything it leaves out is lost to the",
    'assistant. The earlier segments stay as they are; write only the next segment, for the new messages: what they',
    'add, decide or change (say so when they supersede an earlier point). Never repeat the earlier summary and never',
    'invent anything.',
    '',
    "Cover, tersely and only where the new messages have something: the user's intent, preferences and constraints;",
    'facts and decisions; every id, number (with its unit), name, code, file path and URL that may be needed again,',
    'copied exactly; open next steps.',
    '',
    'Cite the transcript messages each point comes from by their number, like [#12] or [#40–44]; only cite numbers',
    'from #{{fromSeq}} to #{{throughSeq}}.',
    'Hard limit: at most {{maxTokens}} tokens. Prefer lists.',
  ].join('\n'),
  user: [
    EARLIER_SUMMARY_OPENING,
    '{{previousSummary}}',
    EARLIER_SUMMARY_CLOSING,
    '',
    'New messages (#{{fromSeq}} to #{{throughSeq}}):',
    '{{transcript}}',
    '',
    'Write the next segment of the summary now: only what these new messages add (at most {{maxTokens}} tokens).',
  ].join('\n'),
};

export interface RenderSummaryPromptOptions {
  previousSummary: string | null;
  /** The chunk's entries, ascending seq. */
  entries: readonly ContextEntry[];
  maxTokens: number;
  /** First seq the summary may cite: the context start (the summary covers everything from there). */
  fromSeq: number;
  throughSeq: number;
  template?: SummaryPromptTemplate;
}

/** One message of the summarizer call. */
export interface SummarizerMessage {
  role: 'system' | 'user';
  content: string;
}

/** Renders one entry as a transcript line the summarizer can cite: `[#12] user: …`. */
export function renderTranscriptLine(entry: ContextEntry): string {
  const lines: string[] = [];
  if (entry.role === 'tool') {
    lines.push(`[#${entry.seq}] tool result${entry.toolCallId ? ` (call ${entry.toolCallId})` : ''}: ${entry.content}`);
  } else if (entry.content !== '' || (entry.toolCalls?.length ?? 0) === 0) {
    lines.push(`[#${entry.seq}] ${entry.role}: ${entry.content}`);
  }
  for (const call of entry.toolCalls ?? []) {
    lines.push(`[#${entry.seq}] assistant called ${call.name}(${JSON.stringify(call.args)}) (call ${call.id})`);
  }
  return lines.join('\n');
}

/** A template's `{{name}}` placeholders filled from `values` (unknown ones stay as they are). */
export function fillSummaryTemplate(text: string, values: Record<string, string>): string {
  // One pass, so placeholder-like text inside the transcript is never substituted.
  return text.replace(/\{\{(\w+)\}\}/g, (placeholder, key: string) => values[key] ?? placeholder);
}

/** The system and user messages of one progressive summarizer call. */
export function renderSummaryPrompt(options: RenderSummaryPromptOptions): SummarizerMessage[] {
  const template = options.template ?? DEFAULT_SUMMARY_PROMPT;
  const values = {
    maxTokens: String(options.maxTokens),
    fromSeq: String(options.fromSeq),
    throughSeq: String(options.throughSeq),
    previousSummary: options.previousSummary?.trim() ? options.previousSummary.trim() : '(none yet)',
    transcript: options.entries.map(renderTranscriptLine).join('\n'),
  };
  return [
    { role: 'system', content: fillSummaryTemplate(template.system, values) },
    { role: 'user', content: fillSummaryTemplate(template.user, values) },
  ];
}
