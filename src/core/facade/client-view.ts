import type { TranscriptMessage } from '../domain';
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
 * stopped before its first word (the client went away before it began: its history has no answer there).
 */
function isHidden(message: TranscriptMessage): boolean {
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
  const isClientCall = 'isClientCall' in calls ? calls.isClientCall : (name: string) => !calls.has(name);
  const items: StoredItem[] = [];
  const clientCalls = new Set<string>('isClientCall' in calls ? calls.clientResults : []);
  let open: OpenAnswer | null = null;
  // The turn of the answer being read (or just ended by a client tool call): its notes join it, no other's.
  let answerTurn: string | null = null;
  const flush = () => {
    if (open)
      items.push({
        role: 'assistant',
        content: joinAnswerParts(open.parts),
        toolCalls: [],
        messageId: open.messageId,
        firstSeq: open.firstSeq,
        lastSeq: open.lastSeq,
        inProgress: open.inProgress,
        stopped: open.stopped,
      });
    open = null;
  };
  for (const message of messages) {
    if (isHidden(message)) continue;
    const seq = message.seq as number;
    const inProgress = message.status === 'streaming';
    if (message.role === 'user') {
      flush();
      answerTurn = null;
      items.push({
        role: 'user',
        content: message.content,
        messageId: message.id,
        firstSeq: seq,
        lastSeq: seq,
        inProgress,
      });
    } else if (message.role === 'assistant') {
      const answer: OpenAnswer = open ?? {
        parts: [],
        messageId: message.id,
        firstSeq: seq,
        lastSeq: seq,
        inProgress: false,
        stopped: false,
      };
      answer.parts.push(message.content);
      answer.messageId = message.id;
      answerTurn = message.turnId;
      answer.lastSeq = seq;
      answer.inProgress ||= inProgress;
      answer.stopped ||= message.status === 'cancelled';
      open = answer;
      const ownCalls = (message.toolCalls ?? []).filter((call) => isClientCall(call.name));
      if (ownCalls.length > 0) {
        for (const call of ownCalls) clientCalls.add(call.id);
        items.push({
          role: 'assistant',
          content: joinAnswerParts(answer.parts),
          toolCalls: ownCalls.map(({ id, name }) => ({ id, name })),
          messageId: message.id,
          firstSeq: answer.firstSeq,
          lastSeq: seq,
          inProgress: answer.inProgress,
          stopped: answer.stopped,
        });
        open = null;
      }
    } else if (message.role === 'system') {
      // An answer's note (see isAnswerNote): a line of the answer it belongs to, as the client received it.
      const last = items.at(-1);
      if (message.turnId !== answerTurn) continue;
      if (open) {
        (open as OpenAnswer).parts.push(message.content);
        (open as OpenAnswer).lastSeq = seq;
      } else if (last?.role === 'assistant') {
        last.content = joinAnswerParts([last.content, message.content]);
        last.lastSeq = seq;
      }
    } else if (message.role === 'tool' && message.toolCallId !== null && clientCalls.has(message.toolCallId)) {
      flush();
      items.push({
        role: 'tool',
        toolCallId: message.toolCallId,
        content: message.content,
        messageId: message.id,
        firstSeq: seq,
        lastSeq: seq,
        inProgress,
      });
    } else if (open) {
      // A server tool's result inside an answer: part of the answer's span, not of what the client saw.
      (open as OpenAnswer).lastSeq = seq;
    }
  }
  flush();
  return items;
}
