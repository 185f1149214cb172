import { fillSummaryTemplate, type ContextEntry, type PackMessage, type SummaryPromptTemplate } from '../context';
import type { ChatPrefix } from '../context/types';

/**
 * A fold that continues the chat's prompt: the summarizer gets the very messages (and tool list) the thread's chat
 * calls send, cut after the newest assistant answer, then one task message naming the messages to fold. A provider's
 * prompt cache then bills nearly the whole fold prompt as cached (the chat calls just sent that prefix), where a
 * stand-alone summarizer prompt of the folded messages is all new tokens. The earlier summary is read where the
 * chat reads it: in the leading system message. Messages carry no seq in the chat, so the task numbers them: they
 * count on from the first folded seq, and landmarks (a seq with its message's opening words) stand at the first and
 * the last, every `LANDMARK_EVERY` messages and wherever a number skips (a message pinned or left out). Listing every
 * message instead cost ~25 tokens a message: a fold of a hundred short chat lines spent more new tokens on its list
 * than the stand-alone prompt did on the messages (the prefix: ChatPrefix, context/types.ts).
 */

/** The first line of a continued fold's task message (how a test stub or a log tells it from a user's message). */
export const FOLD_TASK_OPENING = '[Summary task from the server: not a message of the conversation]';

/** Characters of a folded message's opening quoted in the task's list. */
const OPENING_CHARS = 48;
/** A landmark every this many folded messages (besides the first, the last and each skip). */
const LANDMARK_EVERY = 10;

/** A message's opening as the task quotes it: whitespace collapsed, cut at `OPENING_CHARS` (then `…`). */
export function openingOf(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= OPENING_CHARS ? flat : `${flat.slice(0, OPENING_CHARS)}…`;
}

function describeEntry(entry: ContextEntry): string {
  if (entry.role === 'tool') return `#${entry.seq} tool result: «${openingOf(entry.content)}»`;
  const calls = (entry.toolCalls ?? []).map((call) => call.name);
  const text = entry.content !== '' ? `«${openingOf(entry.content)}»` : '';
  const called = calls.length > 0 ? `${text ? ' ' : ''}(called ${calls.join(', ')})` : '';
  return `#${entry.seq} ${entry.role}: ${text}${called}`;
}

export interface ContinuedFoldInput {
  prefix: ChatPrefix;
  /** The entries this fold summarizes, ascending seq: the oldest of the window. */
  folded: readonly ContextEntry[];
  /** The segment template (the thread's own summary prompt as its `system` when set). */
  template: SummaryPromptTemplate;
  /** First seq the summary may cite (the context start). */
  fromSeq: number;
  maxTokens: number;
  /** Whether the thread has a summary already (its segments are in the leading system message). */
  earlierSummary: boolean;
  /** Counts the task message. */
  measure: (message: { role: 'user'; content: string }) => number;
}

/**
 * The continued fold's messages, or null when the chat's prefix cannot carry this fold: a folded entry is not in it
 * (the budget guard left it out, or it comes after the newest answer), or no assistant answer ends a stretch of it.
 */
export function continuedFoldMessages(input: ContinuedFoldInput): PackMessage[] | null {
  const { prefix, folded } = input;
  const last = folded.at(-1);
  if (!last) return null;
  // Cut after the newest plain answer: what follows (a user message whose turn is running, a call's results) may
  // still change, while everything up to it is a prefix of the thread's next chat call too.
  let end = -1;
  for (let index = prefix.messages.length - 1; index >= 0; index -= 1) {
    const message = prefix.messages[index];
    if (message?.role === 'assistant' && (message.toolCalls?.length ?? 0) === 0) {
      end = index;
      break;
    }
  }
  if (end < 0) return null;
  const kept = prefix.messages.slice(0, end + 1);
  const shown = new Set(kept.flatMap((message) => (message.seq === undefined ? [] : [message.seq])));
  if (!folded.every((entry) => shown.has(entry.seq))) return null;
  const first = folded[0]?.seq ?? last.seq;
  const landmarks = folded.filter(
    (entry, index) =>
      index === 0 ||
      index === folded.length - 1 ||
      index % LANDMARK_EVERY === 0 ||
      entry.seq !== (folded[index - 1]?.seq ?? entry.seq) + 1,
  );
  // A thread's own prompt may place the earlier summary and the transcript itself: here both are in the conversation.
  const values = {
    maxTokens: String(input.maxTokens),
    fromSeq: String(input.fromSeq),
    throughSeq: String(last.seq),
    previousSummary: input.earlierSummary ? '(the summary in the system message above)' : '(none yet)',
    transcript: `(messages #${folded[0]?.seq ?? last.seq} to #${last.seq} of the conversation above)`,
  };
  const content = [
    FOLD_TASK_OPENING,
    'Pause the conversation: write a summary segment instead of a reply, and call no tool.',
    '',
    fillSummaryTemplate(input.template.system, values),
    '',
    `The messages to fold (#${first} to #${last.seq}) are the oldest ${folded.length} of the conversation above (after the system message and any pinned messages).` +
      " They are numbered on from the first, one number a message (recall notes not counted); the landmarks below give a number and the message's opening, and mark where a number is skipped:",
    ...landmarks.map(describeEntry),
    '',
    ...(input.earlierSummary
      ? ['The summary in the system message above is the earlier summary: it stays as it is, do not repeat it.']
      : []),
    `Write the next segment of the summary now: only what messages #${first} to #${last.seq} add (at most ${input.maxTokens} tokens). Answer with the segment only.`,
  ].join('\n');
  const task = { role: 'user' as const, content };
  return [...kept, { ...task, tokens: input.measure(task) }];
}
