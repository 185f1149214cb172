import type { TranscriptMessage } from '../domain/types';
import { isMemoryNote } from '../tools/built-in/save-memory';

/**
 * One message of a thread as an OpenAI client saw it. An answer is one `assistant` item however many rounds of our
 * server tools it took (their texts joined by ANSWER_PART_SEPARATOR); only calls of the client's own tools show.
 */
export type StoredItem =
  | { role: 'user'; content: string; messageId: string; firstSeq: number; lastSeq: number; inProgress: boolean }
  | {
      role: 'assistant';
      content: string;
      toolCalls: { id: string; name: string }[];
      messageId: string;
      firstSeq: number;
      lastSeq: number;
      inProgress: boolean;
      /** Stopped before its end (the client went away): the client may hold less of its text than the thread. */
      stopped: boolean;
    }
  | {
      role: 'tool';
      toolCallId: string;
      content: string;
      messageId: string;
      firstSeq: number;
      lastSeq: number;
      inProgress: boolean;
    };

/** Between the texts of two assistant messages of one answer (a server-tool round between them), as streamed. */
export const ANSWER_PART_SEPARATOR = '\n\n';

/**
 * A note of an answer the client sees as a line of it: a saved memory's or a proposal's ("[memory] …"), written by the
 * server in the answer's turn. It is part of the stored answer, so the client's next history, holding the line,
 * still matches the transcript.
 */
export function isAnswerNote(
  message: Pick<TranscriptMessage, 'role' | 'turnId' | 'toolRunId' | 'status' | 'content'>,
): boolean {
  return (
    message.role === 'system' &&
    message.turnId !== null &&
    message.toolRunId === null &&
    message.status === 'complete' &&
    isMemoryNote(message.content)
  );
}

/** Joins the texts an answer's assistant messages streamed, as the client received them. */
export function joinAnswerParts(parts: readonly string[]): string {
  return parts.filter((part) => part.length > 0).join(ANSWER_PART_SEPARATOR);
}

interface OpenAnswer {
  parts: string[];
  messageId: string;
  firstSeq: number;
  lastSeq: number;
  inProgress: boolean;
  stopped: boolean;
}

/**
 * Not part of what a client saw: forgotten or superseded messages, notices, async tool notes, errors, and an answer
 * stopped before its first word (the client went away before it began: its history has no answer there). The
 * database's `client_view_hidden` is the same rule.
 */
export function isHidden(
  message: Pick<
    TranscriptMessage,
    'seq' | 'deleted' | 'superseded' | 'role' | 'turnId' | 'toolRunId' | 'status' | 'content' | 'toolCalls'
  >,
): boolean {
  return (
    message.seq === null ||
    message.deleted ||
    message.superseded ||
    (message.role === 'system' && !isAnswerNote(message)) ||
    message.toolRunId !== null ||
    message.status === 'error' ||
    message.status === 'pending' ||
    (message.status === 'cancelled' && message.content === '' && (message.toolCalls ?? []).length === 0)
  );
}

/**
 * Which tool calls are the client's: those not named like one of our tools (`serverTools`), or, for a stretch of a
 * transcript read on its own, those the thread's client offered (`isClientCall`) plus the calls whose results are known
 * to be the client's (`clientResults`: their calls may lie before the stretch).
 */
export type ClientCalls =
  ReadonlySet<string> | { isClientCall: (name: string) => boolean; clientResults: ReadonlySet<string> };

/**
 * The thread's transcript (ascending seq) as an OpenAI client saw it: user messages, answers (the assistant texts of
 * one answer and its notes joined), calls of client tools and their results. Our server tools' calls and results, async notes,
 * notices, superseded, forgotten and errored messages are left out. A stretch of a transcript gives the same items as
 * the whole when it starts where an item starts.
 */
export function clientViewOf(messages: readonly TranscriptMessage[], calls: ClientCalls): StoredItem[] {
  const view: ClientView = {
    isClientCall: 'isClientCall' in calls ? calls.isClientCall : (name: string) => !calls.has(name),
    items: [],
    clientCalls: new Set<string>('isClientCall' in calls ? calls.clientResults : []),
    open: null,
    answerTurn: null,
  };
  for (const message of messages) {
    if (isHidden(message)) continue;
    const seq = message.seq as number;
    const inProgress = message.status === 'streaming';
    if (message.role === 'user') {
      flushAnswer(view);
      view.answerTurn = null;
      view.items.push({
        role: 'user',
        content: message.content,
        messageId: message.id,
        firstSeq: seq,
        lastSeq: seq,
        inProgress,
      });
    } else if (message.role === 'assistant') {
      readAssistantMessage(view, message, seq);
    } else if (message.role === 'system') {
      readAnswerNote(view, message, seq);
    } else if (message.role === 'tool' && message.toolCallId !== null && view.clientCalls.has(message.toolCallId)) {
      flushAnswer(view);
      view.items.push({
        role: 'tool',
        toolCallId: message.toolCallId,
        content: message.content,
        messageId: message.id,
        firstSeq: seq,
        lastSeq: seq,
        inProgress,
      });
    } else if (view.open) {
      // A server tool's result inside an answer: part of the answer's span, not of what the client saw.
      view.open.lastSeq = seq;
    }
  }
  flushAnswer(view);
  return view.items;
}

/** What clientViewOf has read so far of a transcript. */
interface ClientView {
  isClientCall: (name: string) => boolean;
  items: StoredItem[];
  /** Ids of the client's tool calls read so far (and of the results known to be the client's). */
  clientCalls: Set<string>;
  /** The answer being read, not yet an item. */
  open: OpenAnswer | null;
  /** The turn of the answer being read (or just ended by a client tool call): its notes join it, no other's. */
  answerTurn: string | null;
}

/** Ends the answer being read, if any, as an item. */
function flushAnswer(view: ClientView): void {
  const open = view.open;
  if (open)
    view.items.push({
      role: 'assistant',
      content: joinAnswerParts(open.parts),
      toolCalls: [],
      messageId: open.messageId,
      firstSeq: open.firstSeq,
      lastSeq: open.lastSeq,
      inProgress: open.inProgress,
      stopped: open.stopped,
    });
  view.open = null;
}

/** An assistant message: a part of the answer being read; calls of the client's tools end the answer as an item. */
function readAssistantMessage(view: ClientView, message: TranscriptMessage, seq: number): void {
  const answer: OpenAnswer = view.open ?? {
    parts: [],
    messageId: message.id,
    firstSeq: seq,
    lastSeq: seq,
    inProgress: false,
    stopped: false,
  };
  answer.parts.push(message.content);
  answer.messageId = message.id;
  view.answerTurn = message.turnId;
  answer.lastSeq = seq;
  answer.inProgress ||= message.status === 'streaming';
  answer.stopped ||= message.status === 'cancelled';
  view.open = answer;
  const ownCalls = (message.toolCalls ?? []).filter((call) => view.isClientCall(call.name));
  if (ownCalls.length > 0) {
    for (const call of ownCalls) view.clientCalls.add(call.id);
    view.items.push({
      role: 'assistant',
      content: joinAnswerParts(answer.parts),
      toolCalls: ownCalls.map(({ id, name }) => ({ id, name })),
      messageId: message.id,
      firstSeq: answer.firstSeq,
      lastSeq: seq,
      inProgress: answer.inProgress,
      stopped: answer.stopped,
    });
    view.open = null;
  }
}

/** An answer's note (see isAnswerNote): a line of the answer it belongs to, as the client received it. */
function readAnswerNote(view: ClientView, message: TranscriptMessage, seq: number): void {
  const last = view.items.at(-1);
  if (message.turnId !== view.answerTurn) return;
  if (view.open) {
    view.open.parts.push(message.content);
    view.open.lastSeq = seq;
  } else if (last?.role === 'assistant') {
    last.content = joinAnswerParts([last.content, message.content]);
    last.lastSeq = seq;
  }
}
