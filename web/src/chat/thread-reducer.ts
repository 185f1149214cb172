import type { MessageDto, ThreadDto, ToolRunDto } from '../../../src/shared/api';
import type { ErrorBody } from '../../../src/shared/errors';
import {
  applyDelta,
  contextReset,
  emptyThreadState,
  mergeMessages,
  queueOutgoing,
  removeOutgoing,
  setThread,
  toolProgress,
  turnEnded,
  turnStarted,
  updateOutgoing,
  upsertToolRun,
  type OutgoingMessage,
  type ThreadState,
} from './thread-state';

/** Everything that changes what the conversation shows of one thread: socket events, acks, REST results, the user. */
export type ThreadAction =
  /** Another thread is open (or none): it starts empty, the join fills it. */
  | { type: 'thread-opened'; threadId: string | null }
  /** A join's ack; `hasMoreBefore` only for a fresh join (a catch-up join says nothing about older pages). */
  | { type: 'joined'; messages: MessageDto[]; thread: ThreadDto; hasMoreBefore?: boolean }
  /** Messages from an event, a catch-up or a REST result (pin). */
  | { type: 'messages-received'; messages: MessageDto[] }
  | { type: 'page-loaded'; messages: MessageDto[]; hasMoreBefore: boolean }
  | { type: 'delta-received'; messageId: string; offset: number; delta: string }
  /** A send's ack: the stored message and the turn it started. */
  | { type: 'message-sent'; message: MessageDto; turnId: string }
  | { type: 'turn-started'; turnId: string }
  /** A turn ended, with the messages its REST result brought (retry, regenerate), and its error if it failed. */
  | { type: 'turn-ended'; turnId: string; messages?: MessageDto[]; error?: ErrorBody }
  | { type: 'thread-updated'; thread: ThreadDto; messages?: MessageDto[] }
  | { type: 'context-reset'; seq: number }
  | { type: 'tool-run-updated'; run: ToolRunDto }
  | { type: 'tool-progress'; runId: string; progress: number; note?: string }
  | { type: 'outgoing-queued'; item: Omit<OutgoingMessage, 'state' | 'error'> }
  | { type: 'outgoing-updated'; clientMessageId: string; patch: Partial<OutgoingMessage> }
  | { type: 'outgoing-discarded'; clientMessageId: string }
  /** The thread's notice (an error not tied to a stored message); null dismisses it. */
  | { type: 'notice'; error: ErrorBody | null };

function reduceMessages(state: ThreadState, action: ThreadAction): ThreadState | null {
  switch (action.type) {
    case 'joined': {
      const merged = setThread(mergeMessages(state, action.messages), action.thread);
      return action.hasMoreBefore === undefined ? merged : { ...merged, hasMoreBefore: action.hasMoreBefore };
    }
    case 'messages-received':
      return mergeMessages(state, action.messages);
    case 'page-loaded':
      return { ...mergeMessages(state, action.messages), hasMoreBefore: action.hasMoreBefore };
    case 'delta-received':
      return applyDelta(state, action);
    case 'thread-updated':
      return setThread(action.messages ? mergeMessages(state, action.messages) : state, action.thread);
    case 'context-reset':
      return contextReset(state, action.seq);
    default:
      return null;
  }
}

function reduceTurns(state: ThreadState, action: ThreadAction): ThreadState | null {
  switch (action.type) {
    case 'message-sent':
      return turnStarted(mergeMessages(state, [action.message]), action.turnId);
    case 'turn-started':
      return turnStarted(state, action.turnId);
    case 'turn-ended': {
      const ended = turnEnded(action.messages ? mergeMessages(state, action.messages) : state, action.turnId);
      return action.error ? { ...ended, notice: action.error } : ended;
    }
    case 'tool-run-updated':
      return upsertToolRun(state, action.run);
    case 'tool-progress':
      return toolProgress(state, action);
    default:
      return null;
  }
}

function reduceOutbox(state: ThreadState, action: ThreadAction): ThreadState | null {
  switch (action.type) {
    case 'outgoing-queued':
      return queueOutgoing(state, action.item);
    case 'outgoing-updated':
      return updateOutgoing(state, action.clientMessageId, action.patch);
    case 'outgoing-discarded':
      return removeOutgoing(state, action.clientMessageId);
    case 'notice':
      return { ...state, notice: action.error };
    default:
      return null;
  }
}

/**
 * The one place the open thread's state changes: pure, so every transition is unit-testable. Without an open thread
 * (null) only `thread-opened` does anything.
 */
export function threadReducer(state: ThreadState | null, action: ThreadAction): ThreadState | null {
  if (action.type === 'thread-opened') return action.threadId ? emptyThreadState(action.threadId) : null;
  if (!state) return state;
  return reduceMessages(state, action) ?? reduceTurns(state, action) ?? reduceOutbox(state, action) ?? state;
}
