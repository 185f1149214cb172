import { AppError } from '../../src/core/errors/app-error';
import type { ContextEntry, RecalledMessage, SavedMemoryItem } from '../../src/core/context/types';
import type { ThreadContext, Turn, TurnKind } from '../../src/core/domain/types';
import type { AcceptedMessage, NextTurn, TranscriptMatch, TurnStore } from '../../src/core/ports';
import { rankElsewhereMatches, rankOwnMatches } from './memory-transcript-search';
import { callUser } from './memory-model-call-store';
import {
  byId,
  copy,
  newId,
  nextSeq,
  toEntry,
  toMessage,
  toThread,
  type MemoryDatabase,
  type MessageRow,
  type ThreadRow,
} from './memory-database';

const ACTIVE = new Set<Turn['status']>(['queued', 'running']);
const busy = (active: number) =>
  new AppError(
    'BUSY',
    `This thread already has ${active - 1} message(s) waiting; try again when the current answer is done.`,
  );

/**
 * What the turn store's context reads bring besides the entries, as the repository's options (RECALL_TOKENS,
 * RECALL_SCOPE, USER_MEMORY_TOKENS). Unlike the repository (recall on unless RECALL_TOKENS=0), the fake's recall is
 * off unless `recallTokens` is set: most unit tests want the window alone.
 */
export interface MemoryContextOptions {
  /** The deployment's recall slot (a thread's `recallTokens` setting overrides it; 0: no recall). Default 0. */
  recallTokens?: number;
  /** Where recall looks unless the thread says (`user`: the owner's other threads too). Default `thread`. */
  recallScope?: 'thread' | 'user';
  /** The owner's saved memories within this many tokens come with reads for a model call; undefined: none. */
  userMemoryTokens?: number;
}

/** Auto-recall candidates read per call (the repository's RECALL_CANDIDATES, RECALL_ELSEWHERE_CANDIDATES). */
const RECALL_CANDIDATES = 12;
const RECALL_ELSEWHERE_CANDIDATES = 6;
/** Characters of a candidate read, and of the answer before the user message that joins the query. */
const RECALL_CANDIDATE_MAX_CHARS = 1500;
const RECALL_ANSWER_QUERY_CHARS = 1000;

const toRecalled = (match: TranscriptMatch): RecalledMessage => ({
  seq: match.seq,
  role: match.role,
  content: match.content.slice(0, RECALL_CANDIDATE_MAX_CHARS),
  createdAt: match.createdAt,
  score: match.score,
});

/**
 * Auto-recall as src/db/load-thread-context.ts selects it: the newest user entry of the window is the query, the
 * answer before it its context; candidates are older than the window, from the context start on, not pinned (and,
 * with the `user` scope, the owner's other threads outside the fork family). Matching is the search fake's (words,
 * not Postgres' stems and BM25); held recall notes (RECALL_STICKY) are not faked.
 */
function recallOf(
  database: MemoryDatabase,
  thread: ThreadRow,
  entries: ContextEntry[],
  options: MemoryContextOptions,
): Pick<ThreadContext, 'recalled' | 'recalledElsewhere'> {
  if ((thread.settings.recallTokens ?? options.recallTokens ?? 0) <= 0) return {};
  const window = entries.filter((entry) => !entry.pinned);
  const newestUser = window.filter((entry) => entry.role === 'user').at(-1);
  const answer = newestUser
    ? window.filter((entry) => entry.role === 'assistant' && entry.seq < newestUser.seq && entry.content !== '').at(-1)
    : undefined;
  const query = newestUser?.content ?? '';
  const recalled = rankOwnMatches(database, {
    threadId: thread.id,
    query,
    context: answer?.content.slice(0, RECALL_ANSWER_QUERY_CHARS) ?? '',
    fromSeq: thread.contextStartSeq,
    beforeSeq: window[0]?.seq ?? thread.lastSeq + 1,
    excludeSeqs: database.entries
      .filter((entry) => entry.threadId === thread.id && entry.pinned)
      .map((entry) => entry.seq),
    limit: RECALL_CANDIDATES,
  }).map(toRecalled);
  if ((thread.settings.recallScope ?? options.recallScope ?? 'thread') !== 'user') return { recalled };
  const recalledElsewhere = rankElsewhereMatches(database, {
    threadId: thread.id,
    query,
    limit: RECALL_ELSEWHERE_CANDIDATES,
  }).map((match) => ({ ...toRecalled(match), thread: { id: match.threadId, title: match.threadTitle } }));
  return { recalled, recalledElsewhere };
}

/** The owner's active saved memories that fit `capTokens`, newest first (the newest while their running total fits). */
function savedMemoriesOf(database: MemoryDatabase, ownerId: string, capTokens: number): SavedMemoryItem[] {
  let total = 0;
  return database.savedMemories
    .filter((item) => item.userId === ownerId && item.status === 'active' && capTokens > 0)
    .reverse()
    .filter((item) => (total += item.tokens) <= capTokens)
    .map((item) => ({ id: item.id, text: item.text, tokens: item.tokens, createdAt: new Date(item.createdAt) }));
}

/**
 * The thread and its context entries, as one read; with `recall`, the auto-recall candidates too, and with `recall`
 * or `promptParts` the owner's saved memories (see MemoryContextOptions).
 */
export function memoryContext(
  database: MemoryDatabase,
  threadId: string,
  read: { recall?: boolean; promptParts?: boolean } = {},
  options: MemoryContextOptions = {},
): ThreadContext | null {
  const thread = database.threads.get(threadId);
  if (!thread) return null;
  const entries = database.entries
    .filter((entry) => entry.threadId === threadId && entry.seq >= thread.contextStartSeq)
    .sort((a, b) => a.seq - b.seq)
    .map(toEntry);
  return {
    thread: toThread(thread),
    window: entries.filter((entry) => !entry.pinned),
    pinned: entries.filter((entry) => entry.pinned),
    ...(read.recall ? recallOf(database, thread, entries, options) : {}),
    ...((read.recall || read.promptParts) && options.userMemoryTokens !== undefined
      ? { savedMemories: savedMemoriesOf(database, thread.ownerId, options.userMemoryTokens) }
      : {}),
  };
}

/**
 * TurnStore in memory (test/contracts/turn-store.contract.ts holds it to the Postgres repository's behaviour): the
 * turn queue, the lease with compare-and-set and the transcript writes of a turn, over a shared MemoryDatabase.
 */
export function createMemoryTurnStore(database: MemoryDatabase, options: MemoryContextOptions = {}): TurnStore {
  const threadOf = (threadId: string): ThreadRow => {
    const thread = database.threads.get(threadId);
    if (!thread) throw new Error(`foreign key: no thread ${threadId}`);
    return thread;
  };
  const activeTurns = (threadId: string) =>
    database.turns.filter((turn) => turn.threadId === threadId && ACTIVE.has(turn.status));
  const addTurn = (threadId: string, kind: TurnKind, userMessageId: string | null): Turn => {
    const turn: Turn = {
      id: newId(),
      threadId,
      kind,
      userMessageId,
      status: 'queued',
      error: null,
      createdAt: new Date(),
      startedAt: null,
      finishedAt: null,
    };
    database.turns.push(turn);
    return turn;
  };
  const messageRow = (messageId: string): MessageRow => {
    const found = byId(database.messages, messageId);
    if (!found) throw new AppError('NOT_FOUND', 'No such message.');
    return found;
  };
  const leaseLive = (thread: ThreadRow) => thread.lease !== null && thread.lease.expiresAt >= Date.now();

  /** The runner's step: the lease (compare-and-set), then the oldest queued turn started, or the lease released. */
  const step = (threadId: string, owner: string, ttlMs: number, start: boolean): NextTurn => {
    const thread = database.threads.get(threadId);
    if (!thread || (leaseLive(thread) && thread.lease?.owner !== owner)) return { outcome: 'leased-elsewhere' };
    thread.lease = { owner, expiresAt: Date.now() + ttlMs };
    // The queue in acceptance order (the table's insertion order; a re-run takes its interrupted turn's place). A turn
    // still running under a lease taken over was interrupted: nothing starts before the sweeper recovers it.
    const interrupted = database.turns.some((turn) => turn.threadId === threadId && turn.status === 'running');
    const next =
      start && !interrupted
        ? database.turns.find((turn) => turn.threadId === threadId && turn.status === 'queued')
        : undefined;
    if (!next) {
      thread.lease = null;
      return { outcome: 'idle' };
    }
    const user = next.userMessageId ? (byId(database.messages, next.userMessageId) ?? null) : null;
    if (user && user.seq === null) {
      const now = new Date();
      const seq = nextSeq(thread);
      Object.assign(user, { seq, status: 'complete', completedAt: now, updatedAt: now });
      database.entries.push({
        threadId,
        seq,
        messageId: user.id,
        role: 'user',
        content: user.content,
        tokens: user.tokens,
        encoding: user.encoding ?? 'o200k_base',
        pinned: false,
      });
    }
    // The answers being replaced leave the window before the new one is generated.
    if (next.kind === 'regenerate' && user?.seq != null) supersedeAnswersAfter(database, threadId, user.seq);
    Object.assign(next, { status: 'running', startedAt: new Date() });
    // The context of the turn's first model call, with auto-recall.
    const context = memoryContext(database, threadId, { recall: true }, options);
    return context
      ? { outcome: 'started', turn: copy(next), userMessage: user ? toMessage(user) : null, context }
      : { outcome: 'idle' };
  };

  return {
    async acceptUserMessage({
      threadId,
      ownerId,
      content,
      tokens,
      encoding,
      clientMessageId,
      maxQueued,
    }): Promise<AcceptedMessage> {
      const owned = database.threads.get(threadId);
      if (!owned || (ownerId !== null && owned.ownerId !== ownerId)) throw new AppError('NOT_FOUND', 'No such thread.');
      if (clientMessageId) {
        const seen = database.messages.find(
          (message) => message.threadId === threadId && message.clientMessageId === clientMessageId,
        );
        // The turn that runs the message again after a crash, when there is one (it will answer it).
        const rerunId = [...database.resumedFrom].find(([, interrupted]) => interrupted === seen?.turnId)?.[0];
        const turn = seen?.turnId ? byId(database.turns, rerunId ?? seen.turnId) : undefined;
        if (seen && turn) return { message: toMessage(seen), turn: copy(turn), duplicate: true };
      }
      const thread = threadOf(threadId);
      const active = activeTurns(threadId).length;
      if (active > maxQueued) throw busy(active);
      const now = new Date();
      const turnId = newId();
      const message: MessageRow = {
        id: newId(),
        threadId,
        seq: null,
        role: 'user',
        content,
        toolCalls: null,
        toolCallId: null,
        status: 'pending',
        error: null,
        tokens,
        clientMessageId,
        turnId,
        toolRunId: null,
        pinned: false,
        superseded: false,
        deleted: false,
        createdAt: now,
        updatedAt: now,
        completedAt: null,
        encoding,
      };
      database.messages.push(message);
      const turn: Turn = {
        id: turnId,
        threadId,
        kind: 'message',
        userMessageId: message.id,
        status: 'queued',
        error: null,
        createdAt: now,
        startedAt: null,
        finishedAt: null,
      };
      database.turns.push(turn);
      thread.lastActivityAt = now;
      thread.updatedAt = now;
      return { message: toMessage(message), turn: copy(turn), duplicate: false };
    },

    async queueTurn({ threadId, kind, userMessageId, maxQueued }) {
      threadOf(threadId);
      const active = activeTurns(threadId);
      // Like `IS NOT DISTINCT FROM`: two turns without a user message (follow-ups) are the same too.
      if (active.some((turn) => turn.userMessageId === userMessageId))
        throw new AppError('CONFLICT', 'This message is already being answered again.');
      if (active.length > maxQueued) throw busy(active.length);
      return copy(addTurn(threadId, kind, userMessageId));
    },

    async findTurn(turnId) {
      const turn = byId(database.turns, turnId);
      return turn ? copy(turn) : null;
    },

    async acquireLease({ threadId, owner, ttlMs }) {
      const thread = database.threads.get(threadId);
      if (!thread) return false;
      if (leaseLive(thread) && thread.lease?.owner !== owner) return false;
      thread.lease = { owner, expiresAt: Date.now() + ttlMs };
      return true;
    },

    async releaseLease({ threadId, owner }) {
      const thread = database.threads.get(threadId);
      if (thread?.lease?.owner === owner) thread.lease = null;
      return database.turns.some((turn) => turn.threadId === threadId && turn.status === 'queued');
    },

    async nextTurn({ threadId, owner, ttlMs }) {
      return step(threadId, owner, ttlMs, true);
    },

    async loadContext(threadId, read) {
      return memoryContext(database, threadId, read, options);
    },

    async saveTokenCounts({ threadId, encoding, entries, summaryTokens }) {
      for (const { seq, tokens } of entries) {
        for (const entry of database.entries)
          if (entry.threadId === threadId && entry.seq === seq) Object.assign(entry, { tokens, encoding });
      }
      const thread = database.threads.get(threadId);
      if (thread && summaryTokens !== null) {
        thread.summaryEncoding = encoding;
        if (thread.summary) thread.summary.tokens = summaryTokens;
      }
    },

    async appendTurnMessage({ threadId, turnId, role, content, status, toolCalls, toolCallId, toolRunId }) {
      const thread = database.threads.get(threadId);
      if (!thread) throw new AppError('NOT_FOUND', 'No such thread.');
      const now = new Date();
      const message: MessageRow = {
        id: newId(),
        threadId,
        seq: nextSeq(thread),
        role,
        content,
        toolCalls: toolCalls ? copy(toolCalls) : null,
        toolCallId: toolCallId ?? null,
        status,
        error: null,
        tokens: 0,
        clientMessageId: null,
        turnId,
        toolRunId: toolRunId ?? null,
        pinned: false,
        superseded: false,
        deleted: false,
        createdAt: now,
        updatedAt: now,
        completedAt: null,
        encoding: null,
      };
      database.messages.push(message);
      return toMessage(message);
    },

    async saveStreamingText(messageId, content) {
      const message = byId(database.messages, messageId);
      if (message?.status === 'streaming') Object.assign(message, { content, updatedAt: new Date() });
    },

    async finishMessage({ messageId, content, status, error, toolCalls, tokens, encoding, entry, call }) {
      const message = messageRow(messageId);
      if (
        entry &&
        message.seq !== null &&
        database.entries.some((row) => row.threadId === message.threadId && row.seq === message.seq)
      ) {
        throw new Error(`unique violation: context entry #${message.seq} exists`);
      }
      const now = new Date();
      Object.assign(message, {
        content,
        status,
        tokens,
        encoding,
        completedAt: now,
        updatedAt: now,
        error: error ? copy(error) : message.error,
        toolCalls: toolCalls ? copy(toolCalls) : message.toolCalls,
      });
      if (entry && message.seq !== null) {
        database.entries.push({
          ...copy(entry),
          threadId: message.threadId,
          seq: message.seq,
          messageId: message.id,
          encoding,
          pinned: false,
        });
      }
      if (call) {
        const row = { ...copy(call), messageId: message.id, userId: callUser(database, call) };
        database.calls.push({ ...row, id: newId(), createdAt: now });
      }
      return toMessage(message);
    },

    async finishTurn({ turnId, status, error }) {
      const turn = byId(database.turns, turnId);
      if (!turn) throw new AppError('NOT_FOUND', 'No such turn.');
      Object.assign(turn, { status, finishedAt: new Date(), error: error ? copy(error) : turn.error });
      return copy(turn);
    },

    async completeTurn({ turnId, threadId, owner, ttlMs, startNext = true }) {
      const turn = byId(database.turns, turnId);
      if (!turn) throw new AppError('NOT_FOUND', 'No such turn.');
      Object.assign(turn, { status: 'complete', finishedAt: new Date() });
      // The context as it was before the step: the fold decision's read.
      const context = memoryContext(database, threadId);
      return { turn: copy(turn), context, next: step(threadId, owner, ttlMs, startNext) };
    },

    async hasQueuedTurns(threadId) {
      return database.turns.some((turn) => turn.threadId === threadId && turn.status === 'queued');
    },

    async hasRunningTurn(threadId, turnId) {
      return database.turns.some(
        (turn) =>
          turn.threadId === threadId && turn.status === 'running' && (turnId === undefined || turn.id === turnId),
      );
    },

    async threadsWithStrandedTurns(limit) {
      const stranded = new Set<string>();
      for (const turn of database.turns) {
        const thread = database.threads.get(turn.threadId);
        if (thread && ACTIVE.has(turn.status) && !leaseLive(thread)) stranded.add(thread.id);
      }
      return [...stranded].slice(0, limit);
    },

    async recoverInterruptedTurns({ threadId, resume, error }) {
      const thread = database.threads.get(threadId);
      if (!thread || leaseLive(thread)) return { resumed: [], failed: [] };
      const resumed: string[] = [];
      const failed: string[] = [];
      const now = new Date();
      const endStreaming = (message: MessageRow) =>
        Object.assign(message, { status: 'error', error: copy(error), completedAt: now, updatedAt: now });
      const running = database.turns.filter((turn) => turn.threadId === threadId && turn.status === 'running');
      for (const turn of running) {
        Object.assign(turn, { status: 'error', error: copy(error), finishedAt: now });
        const answers = database.messages.filter(
          (message) => message.turnId === turn.id && message.role !== 'user' && !message.superseded && !message.deleted,
        );
        if (resume && !database.resumedFrom.has(turn.id)) {
          const rerun: Turn = { ...copy(turn), id: newId(), status: 'queued', error: null, createdAt: now };
          Object.assign(rerun, { startedAt: null, finishedAt: null });
          database.turns.splice(database.turns.indexOf(turn) + 1, 0, rerun);
          database.resumedFrom.set(rerun.id, turn.id);
          for (const run of database.toolRuns) if (run.followUpTurnId === turn.id) run.followUpTurnId = rerun.id;
          for (const message of answers) {
            if (message.status === 'streaming' && message.toolRunId === null) endStreaming(message);
            Object.assign(message, { superseded: true, pinned: false, updatedAt: now });
          }
          const seqs = new Set(answers.map((message) => message.seq));
          database.entries = database.entries.filter((entry) => entry.threadId !== threadId || !seqs.has(entry.seq));
          if (seqs.size > 0) thread.version += 1;
          resumed.push(rerun.id);
          continue;
        }
        const streaming = answers.filter((message) => message.status === 'streaming' && message.toolRunId === null);
        for (const message of streaming) endStreaming(message);
        if (streaming.length === 0) {
          database.messages.push({
            id: newId(),
            threadId,
            seq: nextSeq(thread),
            role: 'assistant',
            content: '',
            toolCalls: null,
            toolCallId: null,
            status: 'error',
            error: copy(error),
            tokens: 0,
            clientMessageId: null,
            turnId: turn.id,
            toolRunId: null,
            pinned: false,
            superseded: false,
            deleted: false,
            createdAt: now,
            updatedAt: now,
            completedAt: now,
            encoding: null,
          });
        }
        failed.push(turn.id);
      }
      for (const message of database.messages) {
        // A tool run's message streams independently of turns (the tools worker completes it).
        if (message.threadId === threadId && message.status === 'streaming' && message.toolRunId === null)
          endStreaming(message);
      }
      return { resumed, failed };
    },
  };
}

/** Marks the non-user messages after `userSeq` superseded and drops their context entries, pinned ones included. */
export function supersedeAnswersAfter(database: MemoryDatabase, threadId: string, userSeq: number): void {
  const answers = database.messages.filter(
    (message) =>
      message.threadId === threadId &&
      message.seq !== null &&
      message.seq > userSeq &&
      message.role !== 'user' &&
      !message.superseded &&
      !message.deleted,
  );
  for (const message of answers) Object.assign(message, { superseded: true, pinned: false });
  const seqs = new Set(answers.map((message) => message.seq));
  database.entries = database.entries.filter((entry) => entry.threadId !== threadId || !seqs.has(entry.seq));
}
