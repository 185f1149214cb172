import type { MessageDto, ThreadDto, ToolRunDto } from '../../../src/shared/api';
import { applyMessageDelta } from '../../../src/shared/apply-message-delta';
import type { ErrorBody } from '../../../src/shared/errors';

/** A message typed here and not yet stored by the server (sent when the connection allows, once). */
export interface OutgoingMessage {
  clientMessageId: string;
  content: string;
  createdAt: string;
  state: 'waiting' | 'sending' | 'failed';
  error: ErrorBody | null;
}

/** What the conversation shows of one thread. Pure data; the reducers below never mutate. */
export interface ThreadState {
  threadId: string;
  /** The thread itself (title, memory settings, context start, rebuilding state), live from join acks and events. */
  thread: ThreadDto | null;
  /** Stored messages, ascending seq; queued ones (seq null) last. */
  messages: MessageDto[];
  hasMoreBefore: boolean;
  outgoing: OutgoingMessage[];
  toolRuns: Record<string, ToolRunDto>;
  /** Turns this tab knows are running (from send acks until turn-end). */
  runningTurns: string[];
  /** Errors of the thread not tied to a stored message. */
  notice: ErrorBody | null;
}

export function emptyThreadState(threadId: string): ThreadState {
  return {
    threadId,
    thread: null,
    messages: [],
    hasMoreBefore: false,
    outgoing: [],
    toolRuns: {},
    runningTurns: [],
    notice: null,
  };
}

const FINAL = new Set(['complete', 'error', 'cancelled']);

function compareMessages(left: MessageDto, right: MessageDto): number {
  if (left.seq !== null && right.seq !== null) return left.seq - right.seq;
  if (left.seq === null && right.seq === null) return left.createdAt.localeCompare(right.createdAt);
  return left.seq === null ? 1 : -1;
}

/** The newer of two versions of one message; a stale partial never replaces a longer text or a final state. */
function newerVersion(existing: MessageDto, incoming: MessageDto): MessageDto {
  const existingFinal = FINAL.has(existing.status);
  const incomingFinal = FINAL.has(incoming.status);
  if (existingFinal && !incomingFinal)
    return existing.seq === null && incoming.seq !== null ? { ...existing, seq: incoming.seq } : existing;
  if (
    !existingFinal &&
    !incomingFinal &&
    existing.content.length > incoming.content.length &&
    existing.content.startsWith(incoming.content)
  ) {
    return { ...incoming, content: existing.content };
  }
  return incoming;
}

/** Adds or updates messages (join acks, pages, events) without duplicates. */
export function mergeMessages(state: ThreadState, incoming: MessageDto[]): ThreadState {
  const relevant = incoming.filter((message) => message.threadId === state.threadId);
  if (relevant.length === 0) return state;
  const byId = new Map(state.messages.map((message) => [message.id, message]));
  for (const message of relevant) {
    const existing = byId.get(message.id);
    byId.set(message.id, existing ? newerVersion(existing, message) : message);
  }
  const clientIds = new Set([...byId.values()].map((message) => message.clientMessageId).filter(Boolean));
  return {
    ...state,
    messages: [...byId.values()].sort(compareMessages),
    outgoing: state.outgoing.filter((item) => !clientIds.has(item.clientMessageId)),
  };
}

/** Appends a streamed delta at its offset; a delta already covered is dropped, a gap waits for message-end. */
export function applyDelta(
  state: ThreadState,
  delta: { messageId: string; offset: number; delta: string },
): ThreadState {
  const index = state.messages.findIndex((message) => message.id === delta.messageId);
  const message = state.messages[index];
  if (!message || FINAL.has(message.status)) return state;
  const content = applyMessageDelta(message.content, delta);
  if (content === null || content === message.content) return state;
  const messages = [...state.messages];
  messages[index] = { ...message, content, status: 'streaming' };
  return { ...state, messages };
}

/**
 * The `afterSeq` of a catch-up join: everything after the last message this tab holds in its final form,
 * so a message that was streaming when the connection dropped comes back whole. Undefined = newest page.
 */
export function catchUpAfterSeq(state: ThreadState): number | undefined {
  const stored = state.messages.filter((message) => message.seq !== null);
  if (stored.length === 0) return undefined;
  const firstOpen = stored.find((message) => !FINAL.has(message.status));
  const last = firstOpen ? firstOpen.seq! - 1 : stored.at(-1)!.seq!;
  return Math.max(0, last);
}

/** True while an answer is being produced (a Stop button makes sense). */
export function isAnswering(state: ThreadState): boolean {
  return (
    state.runningTurns.length > 0 ||
    state.messages.some((message) => message.role === 'assistant' && !FINAL.has(message.status)) ||
    state.messages.some((message) => message.role === 'user' && message.seq === null)
  );
}

export function lowestSeq(state: ThreadState): number | null {
  return state.messages.find((message) => message.seq !== null)?.seq ?? null;
}

export function queueOutgoing(state: ThreadState, item: Omit<OutgoingMessage, 'state' | 'error'>): ThreadState {
  return { ...state, outgoing: [...state.outgoing, { ...item, state: 'waiting', error: null }] };
}

export function updateOutgoing(
  state: ThreadState,
  clientMessageId: string,
  patch: Partial<OutgoingMessage>,
): ThreadState {
  return {
    ...state,
    outgoing: state.outgoing.map((item) => (item.clientMessageId === clientMessageId ? { ...item, ...patch } : item)),
  };
}

export function removeOutgoing(state: ThreadState, clientMessageId: string): ThreadState {
  return { ...state, outgoing: state.outgoing.filter((item) => item.clientMessageId !== clientMessageId) };
}

export function turnStarted(state: ThreadState, turnId: string): ThreadState {
  return state.runningTurns.includes(turnId) ? state : { ...state, runningTurns: [...state.runningTurns, turnId] };
}

export function turnEnded(state: ThreadState, turnId: string): ThreadState {
  return { ...state, runningTurns: state.runningTurns.filter((id) => id !== turnId) };
}

export function upsertToolRun(state: ThreadState, run: ToolRunDto): ThreadState {
  return { ...state, toolRuns: { ...state.toolRuns, [run.id]: run } };
}

export function toolProgress(
  state: ThreadState,
  progress: { runId: string; progress: number; note?: string },
): ThreadState {
  const run = state.toolRuns[progress.runId];
  if (!run || (run.status !== 'running' && run.status !== 'queued')) return state;
  return upsertToolRun(state, {
    ...run,
    status: 'running',
    progress: Math.max(run.progress, progress.progress),
    progressNote: progress.note ?? run.progressNote,
  });
}

/** The user message a failed answer belongs to (the retry route takes its id). */
export function userMessageBefore(state: ThreadState, message: MessageDto): MessageDto | null {
  const sameTurn = state.messages.find(
    (candidate) => candidate.role === 'user' && candidate.turnId !== null && candidate.turnId === message.turnId,
  );
  if (sameTurn) return sameTurn;
  const before = state.messages.filter(
    (candidate) =>
      candidate.role === 'user' && candidate.seq !== null && message.seq !== null && candidate.seq < message.seq,
  );
  return before.at(-1) ?? null;
}

/** A newer version of the thread (join ack, `thread-updated`); another thread's is ignored. */
export function setThread(state: ThreadState, thread: ThreadDto): ThreadState {
  return thread.id === state.threadId ? { ...state, thread } : state;
}

/** `context-reset`: the model now sees nothing before `seq` (the divider moves there, or goes away at 1). */
export function contextReset(state: ThreadState, seq: number): ThreadState {
  return state.thread ? { ...state, thread: { ...state.thread, contextStartSeq: seq } } : state;
}

/**
 * Where the "new context" divider goes: before the message at the context start, or at the end while nothing was
 * sent after it (`undoable`: the server undoes a fresh context until the next message). Null without a reset.
 */
export function contextDivider(state: ThreadState): { seq: number; undoable: boolean } | null {
  const seq = state.thread?.contextStartSeq ?? 1;
  if (seq <= 1) return null;
  const undoable =
    !state.messages.some((message) => message.seq !== null && message.seq >= seq) &&
    !state.messages.some((message) => message.seq === null);
  return { seq, undoable };
}

/** The answer "Regenerate" applies to: the thread's last live assistant answer, after the last user message, finished. */
export function regenerableAnswer(state: ThreadState): MessageDto | null {
  const live = state.messages.filter(
    (message) =>
      message.seq !== null &&
      !message.deleted &&
      !message.superseded &&
      (message.role === 'user' || message.role === 'assistant'),
  );
  const last = live.at(-1);
  if (!last || last.role !== 'assistant' || !FINAL.has(last.status) || last.toolCalls?.length) return null;
  if (state.thread && last.seq! < state.thread.contextStartSeq) return null;
  return last;
}
