import type { PackTokenParts, PackToolResult } from './context/build-context-pack';
import type { ContextEntry, PackMessage, ToolCall } from './context/types';
import type { MessageStatus, Thread, ThreadContext, ThreadSettings, TranscriptMessage, Turn, TurnKind } from './domain';
import type { ErrorBody } from '../shared/errors';
import type { ThreadEvent } from '../shared/events';
import type { OpenAIFunctionTool } from './tools/tool-registry';
import type { ToolRun, ToolRunStatus } from './tools/types';
import type { AsyncRunCaps } from './tools/async-run-cap';
import type { SavedMemory, SavedMemorySource, SavedMemoryStatus } from './saved-memories/saved-memory';

/**
 * What the core needs from the world. Adapters implement these (db/, jobs/, llm/, realtime/);
 * tests use the fakes in test/fakes. Wiring happens once, in src/app/compose.ts.
 */

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface ThreadStore {
  ensureUser(userId: string, kind: 'guest' | 'external'): Promise<void>;
  /** QUOTA_EXCEEDED when the owner already has `maxThreads` threads (MAX_THREADS_PER_USER); exact under races. */
  createThread(input: { ownerId: string; title?: string; maxThreads: number }): Promise<Thread>;
  /** The thread if it exists and belongs to `ownerId` (any owner when ownerId is null). */
  findThread(threadId: string, ownerId: string | null): Promise<Thread | null>;
  listThreads(input: { ownerId: string; cursor?: string; limit: number }): Promise<Page<Thread>>;
  /** A user's title: it is never replaced by an automatic one. */
  renameThread(threadId: string, title: string): Promise<Thread>;
  /**
   * Deletes the thread and everything of it, but its model-call records: they stay with their user and figures, without
   * the thread or any of its content, so the costs of earlier days never shrink.
   */
  deleteThread(threadId: string): Promise<void>;
  countMessages(threadId: string): Promise<number>;
}

/** What an automatic title is made from (ThreadTitleStore.firstExchange). */
export interface FirstExchange {
  /** The thread's first user message. */
  userText: string;
  /** The first complete answer after it; null when there is none (yet). */
  answerText: string | null;
  /** A branch: its title ends in " (branch)". */
  branch: boolean;
  /** A thread of an OpenAI client (/v1): its client makes its own titles, so ours costs no model call. */
  openaiClient: boolean;
}

/** Automatic chat titles (core/titles): read the first exchange of an untitled thread, write its title. */
export interface ThreadTitleStore {
  /** The thread's first exchange while its title is still the default one; null when titled or gone. */
  firstExchange(threadId: string): Promise<FirstExchange | null>;
  /**
   * Sets an automatic title only over the default one (a conditional update: a rename that came first wins);
   * the updated thread, or null when it was titled meanwhile or is gone.
   */
  setAutomaticTitle(threadId: string, title: string): Promise<Thread | null>;
}

export interface TranscriptStore {
  /** Ascending seq; with neither bound, the newest page. Pending (queued) messages come last. */
  listMessages(input: {
    threadId: string;
    before?: number;
    after?: number;
    limit: number;
  }): Promise<{ messages: TranscriptMessage[]; hasMoreBefore: boolean; hasMoreAfter: boolean }>;
  findMessage(threadId: string, messageId: string): Promise<TranscriptMessage | null>;
  listTurnMessages(turnId: string): Promise<TranscriptMessage[]>;
  /**
   * The transcript rendered as context entries for a summary rebuild: messages with seq in [fromSeq, throughSeq]
   * that carry content (complete or cancelled; not forgotten, not superseded), ascending seq, tokens recounted by the caller.
   */
  listSummarizableEntries(input: { threadId: string; fromSeq: number; throughSeq: number }): Promise<ContextEntry[]>;
}

export type { ElsewhereMatch, MessageSearchHit, TranscriptMatch, TranscriptSearch } from './transcript-search';

export interface AcceptedMessage {
  message: TranscriptMessage;
  turn: Turn;
  /** True when `clientMessageId` had been seen: nothing new was stored. */
  duplicate: boolean;
}

/** What the runner's step between turns found (TurnStore.nextTurn). */
export type NextTurn =
  | { outcome: 'leased-elsewhere' }
  | { outcome: 'idle' }
  | { outcome: 'started'; turn: Turn; userMessage: TranscriptMessage | null; context: ThreadContext };

/** The turn queue, the per-thread lease and the transcript writes of a turn. */
export interface TurnStore {
  /**
   * Stores the user message as pending and queues its turn, in one transaction. Throws NOT_FOUND when the thread
   * is not `ownerId`'s (null: any owner; a repeated clientMessageId is only found on the owner's thread), BUSY past
   * `maxQueued`.
   */
  acceptUserMessage(input: {
    threadId: string;
    ownerId: string | null;
    content: string;
    tokens: number;
    encoding: string;
    clientMessageId: string | null;
    maxQueued: number;
  }): Promise<AcceptedMessage>;
  /**
   * Queues a turn with no new user message (a retry) under the thread's lock: BUSY when `maxQueued` turns already
   * wait besides the running one, CONFLICT when a turn for the same user message is already queued or running.
   */
  queueTurn(input: {
    threadId: string;
    kind: TurnKind;
    userMessageId: string | null;
    maxQueued: number;
  }): Promise<Turn>;
  findTurn(turnId: string): Promise<Turn | null>;
  /** Takes or renews the thread's lease with compare-and-set; false when another owner holds a live lease. */
  acquireLease(input: { threadId: string; owner: string; ttlMs: number }): Promise<boolean>;
  /**
   * Releases the lease when `owner` holds it. True when turns are queued after the release (checked after it, so
   * a send that arrived while the lease was held, and could not take it, is seen).
   */
  releaseLease(input: { threadId: string; owner: string }): Promise<boolean>;
  /**
   * The runner's step between turns: takes or renews the thread's lease for `owner` (as acquireLease) and under it
   * starts the oldest queued turn: its pending user message gets the next seq and joins the window, in one
   * transaction; the context of the turn's first model call (with auto-recall) comes with it. When nothing is queued
   * the lease is released in that same transaction (`idle`): a send that commits after it finds the lease free, so
   * its own kick runs its turn. `leased-elsewhere` when another owner holds a live lease.
   */
  nextTurn(input: { threadId: string; owner: string; ttlMs: number }): Promise<NextTurn>;
  /**
   * The thread and its context in one statement. With `recall`, the same statement also finds the auto-recall
   * candidates (ThreadContext.recalled): messages older than the window, from the context start on, not pinned, that
   * best match the newest user message of the window and the answer it replies to (skipped when the thread's recall
   * slot is 0). With `promptParts`, what a chat prompt shows besides the recall slot (the owner's saved memories, held
   * recall notes) comes without the candidates' search: a fold that continues the chat's prompt reads so.
   */
  loadContext(threadId: string, options?: { recall?: boolean; promptParts?: boolean }): Promise<ThreadContext | null>;
  /** Stores counts redone with another encoding (see refreshTokenCounts). */
  saveTokenCounts(input: {
    threadId: string;
    encoding: string;
    entries: { seq: number; tokens: number }[];
    summaryTokens: number | null;
  }): Promise<void>;
  /** Appends a message produced by the turn (assistant or tool) with the next seq. */
  appendTurnMessage(input: {
    threadId: string;
    turnId: string;
    role: 'assistant' | 'tool' | 'system';
    content: string;
    status: MessageStatus;
    toolCalls?: ToolCall[];
    toolCallId?: string;
    toolRunId?: string;
  }): Promise<TranscriptMessage>;
  /** Saves the text so far of a streaming message (throttled by the caller). */
  saveStreamingText(messageId: string, content: string): Promise<void>;
  /**
   * Ends a message: final text and status; when `entry` is given, the message's context entry joins the window
   * in the same transaction, and when `call` is given, the model call that produced it with its manifest.
   */
  finishMessage(input: {
    messageId: string;
    content: string;
    status: MessageStatus;
    error?: { code: string; message: string };
    toolCalls?: ToolCall[];
    tokens: number;
    encoding: string;
    entry?: Omit<ContextEntry, 'seq'>;
    call?: ChatCallRecord;
  }): Promise<TranscriptMessage>;
  finishTurn(input: {
    turnId: string;
    status: 'complete' | 'error' | 'cancelled';
    error?: { code: string; message: string };
  }): Promise<Turn>;
  /**
   * Ends a turn that completed (waiting for the WAL flush, as finishTurn) and takes the runner's next step (nextTurn)
   * in the same transaction: one round trip between two turns. `context` is the thread's context right after the
   * turn, before any next turn's start (no auto-recall: the fold decision's read); null when the thread is gone.
   * With `startNext` false (a process that is closing) the step starts nothing and only releases the lease.
   */
  completeTurn(input: {
    turnId: string;
    threadId: string;
    owner: string;
    ttlMs: number;
    startNext?: boolean;
  }): Promise<{ turn: Turn; context: ThreadContext | null; next: NextTurn }>;
  hasQueuedTurns(threadId: string): Promise<boolean>;
  /** Threads with queued or running turns and no live lease (for the sweeper). */
  threadsWithStrandedTurns(limit: number): Promise<string[]>;
  /**
   * The sweeper's step for a thread of a dead lease (nothing while a live lease is held): each running turn ends with
   * `error`; with `resume`, one that is not itself a re-run is queued again in its place (a new turn, its answers so
   * far superseded), else its answer shows `error` (its streaming message, or an error answer appended).
   * Returns the new turns' ids and the ids of the turns that ended for good.
   */
  recoverInterruptedTurns(input: {
    threadId: string;
    resume: boolean;
    error: ErrorBody;
  }): Promise<{ resumed: string[]; failed: string[] }>;
}

export interface ModelCallRecord {
  threadId: string | null;
  /** Whom the call was for; absent: the thread's owner (a call of no thread names its user). */
  userId?: string | null;
  messageId: string | null;
  /** `auxiliary`: a /v1 client's background request (a title, tags), of no thread; `title`: a chat's automatic title (core/titles). */
  purpose: 'chat' | 'summary' | 'condense' | 'auxiliary' | 'title';
  model: string;
  estimatedPromptTokens: number;
  reportedPromptTokens: number | null;
  reportedCompletionTokens: number | null;
  latencyMs: number | null;
  summaryRevision?: number | null;
  windowFromSeq?: number | null;
  windowThroughSeq?: number | null;
  pinnedSeqs?: number[];
  recalledSeqs?: number[];
  omitted?: number;
  overflowRetry?: boolean;
  error?: string | null;
  /** Prompt tokens the provider reported as read from its prompt cache; null when not reported. */
  reportedCachedTokens?: number | null;
  /** Chat calls: where the prompt first differed from the thread's previous call's (null: no previous call known). */
  promptDivergence?: PromptDivergence | null;
  /** Chat calls: the prompt's fingerprints, so the thread's next call can compare with it from any process. */
  promptFingerprints?: PromptFingerprints | null;
}

/** A chat prompt's fingerprints (prompt-prefix-tracker.ts): its tool list's, and one per message. */
export interface PromptFingerprints {
  tools: number;
  messages: number[];
}

/** Where a chat call's prompt first differed from the previous call's in the same thread (what broke the cache). */
export interface PromptDivergence {
  /** Index of the first pack message that differs; -1 when the tool schemas (sent before the messages) differ; the pack's length when the previous prompt is a prefix of this one. */
  messageIndex: number;
  /** Estimated prompt tokens before it (tool schemas included), the most a provider's prompt cache could reuse. */
  tokensBefore: number;
}

/** What a chat call was given besides the summary revision and seq ranges of `ModelCallRecord`. */
export interface ChatCallManifest {
  /** The stable system prefix; the store keeps each distinct text once, by its hash. */
  systemPrefix: { text: string; tokens: number };
  windowSeqs: number[];
  /** Tool results as they entered the pack (condensed text included: a fold deletes the window entries). */
  toolResults: PackToolResult[];
  parts: PackTokenParts & { toolSchemas: number };
  /** The user's saved memories the pack carried. */
  savedMemoryIds?: string[];
  /** Messages of the user's other threads auto-recall put in the pack. */
  recalledElsewhere?: { threadId: string; seq: number }[];
  /** What the call recalled anew, held in place by later calls until the next fold (ContextPackManifest.recallNote). */
  recallNote?: {
    servedSeq: number;
    seqs: number[];
    elsewhere: { threadId: string; seq: number }[];
    tokens: number;
  } | null;
}

/** A chat call that produced an answer: stored with the answer, in the same statement (TurnStore.finishMessage). */
export interface ChatCallRecord extends ModelCallRecord {
  purpose: 'chat';
  manifest: ChatCallManifest;
}

export interface ModelCallStore {
  record(call: ModelCallRecord): Promise<void>;
}

export interface SummaryCommit {
  threadId: string;
  /** The thread version the fold was planned against (compare-and-set). */
  expectedVersion: number;
  author: 'fold' | 'overflow-fallback' | 'rebuild' | 'admin';
  authorId?: string | null;
  text: string;
  /** Where each segment of `text` ends (core/summary/summary-segments); `[text.length]` for one segment. */
  segmentEnds: number[];
  tokens: number;
  encoding: string;
  fromSeq: number;
  throughSeq: number;
  /** Window seqs folded out by this commit. */
  foldedSeqs: number[];
  model: string | null;
  tokensIn: number | null;
  tokensOut: number | null;
  durationMs: number | null;
  identifiersKept: number | null;
  identifiersTotal: number | null;
}

export interface SummaryRevisionRecord {
  revision: number;
  author: SummaryCommit['author'];
  authorId: string | null;
  text: string;
  /** The text's segment ends; empty on revisions stored before segments (one segment). */
  segmentEnds: number[];
  tokens: number;
  fromSeq: number;
  throughSeq: number;
  model: string | null;
  tokensIn: number | null;
  tokensOut: number | null;
  durationMs: number | null;
  identifiersKept: number | null;
  identifiersTotal: number | null;
  redacted: boolean;
  createdAt: Date;
}

export interface SummaryStore {
  /** Commits a new revision and folds entries out of the window atomically; false when the thread's version moved. */
  commit(commit: SummaryCommit): Promise<{ committed: true; revision: number } | { committed: false }>;
  recordFoldError(threadId: string, message: string | null): Promise<void>;
  listRevisions(threadId: string): Promise<SummaryRevisionRecord[]>;
  /**
   * Thread ids whose state needs a fold (the sweeper's query): under the thread's own trigger when it has one
   * (a `fraction` of `maxInputTokens`), else under the deployment's thresholds.
   */
  threadsNeedingFold(input: {
    limit: number;
    minWindowTokens: number;
    minWindowMessages: number;
    maxInputTokens: number;
  }): Promise<string[]>;
}

/** Text deltas, tool calls and usage of one streamed model call. */
export interface ChatResult {
  text: string;
  toolCalls: ToolCall[];
  /** Calls whose arguments were not a JSON object; they are answered with an error like the others. */
  invalidToolCalls?: { id: string; name: string; rawArguments: string; error: string }[];
  /** `cachedTokens`: prompt tokens the provider read from its prompt cache; null when it did not say. */
  usage: { promptTokens: number; completionTokens: number; cachedTokens?: number | null } | null;
}

export interface ChatModelPort {
  readonly model: string;
  /**
   * `tools` are offered to the model (OpenAI function format); absent or empty offers none. `toolChoice: 'none'`
   * keeps them in the request (the prompt's prefix stays the same) but tells the model not to call one.
   * `cacheKey` is sent as `prompt_cache_key` when the adapter is configured to (PROMPT_CACHE_KEY).
   */
  stream(input: {
    messages: PackMessage[];
    signal: AbortSignal;
    onDelta: (text: string) => void;
    tools?: OpenAIFunctionTool[];
    toolChoice?: 'auto' | 'none';
    cacheKey?: string;
  }): Promise<ChatResult>;
}

export interface SummarizerPort {
  readonly model: string;
  /**
   * A fold that continues the chat's prompt (see continued-fold-prompt.ts) sends the chat's `tools` with
   * `toolChoice: 'none'`, and the thread's `cacheKey` (sent as `prompt_cache_key` when configured), so the prompt
   * reaches the cache the thread's chat calls filled.
   */
  summarize(input: {
    messages: PackMessage[];
    signal?: AbortSignal;
    tools?: OpenAIFunctionTool[];
    toolChoice?: 'none';
    cacheKey?: string;
  }): Promise<ChatResult>;
}

/** Automatic titles made by the summarizer model run as jobs of the summary queue, off the answer's path. */
export interface TitleQueue {
  /** Enqueues the thread's title job (deduplicated per thread; the job is a no-op once the thread is titled). */
  enqueueTitle(threadId: string): Promise<void>;
}

export interface FoldQueue {
  /** Enqueues a fold for the thread (deduplicated per thread). Fails fast when Redis is down. */
  enqueueFold(threadId: string, reason: string, force?: boolean): Promise<string | null>;
}

/** Summary rebuilds run as jobs of the summary queue (long: many summarizer calls). */
export interface RebuildQueue {
  /** Enqueues a rebuild of the thread's summary (deduplicated per thread); returns the job id. */
  enqueueRebuild(input: { threadId: string; actorId: string }): Promise<string | null>;
}

/** One row of the admin's thread list: the thread, its owner and its context health. */
export interface AdminThreadRow {
  id: string;
  title: string;
  ownerId: string;
  ownerKind: 'guest' | 'external';
  createdAt: Date;
  lastActivityAt: Date;
  memoryMode: 'summary' | 'window-only';
  messageCount: number;
  summaryPreview: string;
  summaryTokens: number;
  summaryRevision: number;
  coveredThroughSeq: number;
  windowEntries: number;
  windowTokens: number;
  /** Window entries the next fold would fold: beyond the keep policy, counted only while the trigger fires. */
  foldLagEntries: number;
  lastFoldAt: Date | null;
  lastFoldError: string | null;
}

export type AdminThreadSort = 'activity' | 'summary' | 'lag' | 'errors';

/** The deployment's fold policy in the form the admin list's SQL evaluates (any trigger condition fires). */
export interface FoldLagPolicy {
  minWindowTokens: number;
  minWindowMessages: number;
  keep: { kind: 'messages' | 'tokens'; value: number };
}

export interface AdminThreadStore {
  /** All users' threads, filtered by `query` (title, owner id or thread id), sorted descending by `sort`. */
  listThreads(input: {
    query?: string;
    cursor?: string;
    limit: number;
    sort: AdminThreadSort;
    policy: FoldLagPolicy;
  }): Promise<Page<AdminThreadRow>>;
  /** Size of a thread's transcript. */
  transcriptSize(threadId: string): Promise<{ messages: number; tokens: number; characters: number; lastSeq: number }>;
}

export interface AuditEntry {
  id: string;
  /** The admin: a JWT's `sub`, or `admin-token` for the bootstrap token. */
  actor: string;
  action: string;
  threadId: string | null;
  details: Record<string, unknown>;
  createdAt: Date;
}

/** The admin audit trail: every admin write, who, what, when. */
export interface AuditStore {
  record(entry: {
    actor: string;
    action: string;
    threadId: string | null;
    details?: Record<string, unknown>;
  }): Promise<void>;
  /** Newest first. */
  list(input: { threadId?: string; cursor?: string; limit: number }): Promise<Page<AuditEntry>>;
}

/** Why a pin was refused: the thread's pinned tokens would pass the cap. */
export interface PinRefusal {
  pinned: false;
  /** Tokens pinned now (entries at or after the context start). */
  pinnedTokens: number;
  /** Tokens the request would add. */
  addedTokens: number;
}

/**
 * The writes of the memory controls (pins, per-thread settings, fresh context, forget, regenerate). Each is one
 * transaction that locks the thread row and bumps the thread's version, so a fold planned before it re-plans.
 */
export interface MemoryStore {
  /** Messages with a seq in [fromSeq, throughSeq], ascending (to find tool exchanges around a message). */
  listMessagesBySeq(input: { threadId: string; fromSeq: number; throughSeq: number }): Promise<TranscriptMessage[]>;
  /** Transcript messages of the given seqs (a subset of the thread's). */
  findMessagesBySeq(threadId: string, seqs: number[]): Promise<TranscriptMessage[]>;
  /** Non-user messages answering `userMessageId` (its own turn, retries and regenerations), ascending seq. */
  listAnswers(threadId: string, userMessageId: string): Promise<TranscriptMessage[]>;
  /** Tokens of the pinned entries at or after the context start. */
  pinnedTokens(threadId: string): Promise<number>;
  /**
   * Pins the messages of `seqs`: their context entries are marked pinned (re-created from the transcript when a
   * fold already took them), unless the pinned tokens would pass `maxPinnedTokens`.
   */
  pin(input: {
    threadId: string;
    seqs: number[];
    maxPinnedTokens: number;
  }): Promise<{ pinned: true; messages: TranscriptMessage[]; pinnedTokens: number } | PinRefusal>;
  /** Unpins: the entries return to the window (and are folded at the next fold when older than it). */
  unpin(input: { threadId: string; seqs: number[] }): Promise<{ messages: TranscriptMessage[]; pinnedTokens: number }>;
  updateSettings(input: {
    threadId: string;
    settings: ThreadSettings;
    memoryMode: 'summary' | 'window-only';
  }): Promise<Thread>;
  /** Fresh context from the next seq on; remembers how to undo it until the next message. */
  resetContext(threadId: string): Promise<Thread>;
  /** Undoes the last fresh context; null when there is none to undo (a message came since, or it was undone). */
  undoContextReset(threadId: string): Promise<Thread | null>;
  /**
   * Forgets messages: tombstones them (content erased, deletedAt set), deletes their context entries, erases the tool
   * runs they made or reported, redacts every summary revision whose text may hold them, and withdraws the current
   * summary when it covered one of them.
   */
  forget(input: {
    threadId: string;
    messageIds: string[];
  }): Promise<{ messages: TranscriptMessage[]; thread: Thread; redactedRevisions: number }>;
  /**
   * Regenerate: marks the answers after the thread's last user message superseded, drops them from the window and
   * queues a `regenerate` turn for it, in one transaction. Throws BUSY while a turn is queued or running.
   */
  queueRegenerate(input: {
    threadId: string;
    userMessageId: string;
  }): Promise<{ turn: Turn; superseded: TranscriptMessage[] }>;
  /** The newest user message with a seq that is not forgotten. */
  lastUserMessage(threadId: string): Promise<TranscriptMessage | null>;
  /** Threads whose summary is withdrawn and waits for its rebuild (for the sweeper), with their version. */
  threadsAwaitingRebuild(limit: number): Promise<{ threadId: string; version: number }[]>;
}

/** Batched reads of the export: a thread of any size is read a page at a time. */
export interface ExportReader {
  /** Messages with seq > afterSeq, ascending, at most `limit` (pending ones are not part of the transcript yet). */
  messagesAfter(input: { threadId: string; afterSeq: number; limit: number }): Promise<TranscriptMessage[]>;
  /** Summary revisions with revision > afterRevision, ascending, at most `limit` (redacted ones without text). */
  revisionsAfter(input: { threadId: string; afterRevision: number; limit: number }): Promise<SummaryRevisionRecord[]>;
}

/** The fold of a thread once it has been idle longer than the provider's prompt cache lives (summary queue). */
export interface IdleFoldQueue {
  /**
   * Schedules the thread's idle fold PROMPT_CACHE_TTL from now, pushing back the one already scheduled: one job per
   * thread. Fails fast when Redis is down.
   */
  scheduleIdleFold(threadId: string): Promise<void>;
}

/** Background rebuilds of a summary withdrawn by a forget (summary queue). */
export interface ForgetRebuildQueue {
  /** One job per withdrawal (`version` is the thread's version after it), so a running rebuild never swallows it. */
  enqueueForgetRebuild(input: { threadId: string; version: number }): Promise<string | null>;
}

/** Publishes thread events to every subscriber (sockets in any process, SSE responses). */
export interface ThreadEventBus {
  publish(event: ThreadEvent): void;
  subscribe(threadId: string, listener: (event: ThreadEvent) => void): () => void;
  /** Every thread's events (the socket server forwards them to rooms); returns the unsubscribe. */
  subscribeAll(listener: (event: ThreadEvent) => void): () => void;
}

export interface Clock {
  now(): Date;
}

export type { ThreadSettings };

/** Structured logging as the core uses it (pino satisfies it). */
export interface LogPort {
  debug(object: object, message?: string): void;
  info(object: object, message?: string): void;
  warn(object: object, message?: string): void;
  error(object: object, message?: string): void;
}

/** Persistent async tool runs (the outbox of the tools queue) and their one-time report to the thread. */
export interface ToolRunStore {
  /**
   * Writes the run (`queued`) and its transcript message (no seq yet, `streaming`) in one transaction. With `caps`,
   * the running runs of the thread and of its owner are counted under a lock on the owner first (turns of one user
   * in several threads, in any process, take turns): throws AsyncRunCapReached at a cap, writing nothing.
   */
  createRun(input: {
    threadId: string;
    messageId: string;
    toolCallId: string;
    name: string;
    args: Record<string, unknown>;
    startedAtSeq: number;
    caps?: AsyncRunCaps;
  }): Promise<{ run: ToolRun; message: TranscriptMessage }>;
  /** The run, when it exists and its thread belongs to `ownerId` (any owner when null). */
  findRun(runId: string, ownerId: string | null): Promise<ToolRun | null>;
  /** `queued`/`running` -> `running` (attempts + 1); null when the run has already finished. */
  startRun(runId: string): Promise<ToolRun | null>;
  /** Saves progress on the run and the text of its streaming transcript message. */
  saveProgress(input: {
    runId: string;
    progress: number;
    note: string | null;
    transcriptText: string;
  }): Promise<TranscriptMessage | null>;
  isCancelRequested(runId: string): Promise<boolean>;
  /** Sets the cancel flag every worker polls; a still-queued run is cancelled at once. Null when already finished. */
  requestCancel(runId: string): Promise<ToolRun | null>;
  /** Records the outcome unless the run already finished (then null: the first outcome stands). */
  finishRun(input: {
    runId: string;
    status: Exclude<ToolRunStatus, 'queued' | 'running'>;
    result: string | null;
    resultTokens: number | null;
    condensed: string | null;
    error: string | null;
  }): Promise<ToolRun | null>;
  /**
   * Reports a finished run exactly once, in one transaction: sets `reportedAt`; completes the run's transcript
   * message at the thread's next seq with the full text and its context entry (the note); queues a follow-up
   * turn unless one is already queued (results landing together share one). `reported: false` when already done,
   * or when the run's outcome is no longer `basedOn` (the outcome the text was written from; a forget replaces it).
   */
  reportRun(input: {
    runId: string;
    transcriptText: string;
    transcriptTokens: number;
    note: { content: string; tokens: number };
    encoding: string;
    basedOn: Pick<ToolRun, 'status' | 'error'>;
  }): Promise<
    { reported: false } | { reported: true; message: TranscriptMessage; followUp: Turn; followUpCreated: boolean }
  >;
  /** Seqs of the result notes a follow-up turn delivers (its pack puts them last). */
  followUpNoteSeqs(turnId: string): Promise<number[]>;
  /** Async runs not yet finished (queued or running) on the thread and on all of its owner's threads. */
  activeRunCounts(input: { threadId: string; ownerId: string }): Promise<{ thread: number; user: number }>;
  /**
   * How many follow-up turns in a row, this one included, the thread has queued since its last turn that answered
   * a user (message, retry, regenerate): the depth of a chain of tool results asking for more tools.
   */
  followUpDepth(turnId: string): Promise<number>;
  /** Background work was submitted: stores its task id and the deadline (now + `timeoutMs`, Postgres' clock). */
  markSubmitted(input: { runId: string; taskId: string; timeoutMs: number }): Promise<boolean>;
  /** The other side acknowledged the run request of a preset task id (stores `handedAt` once). */
  markHanded(runId: string): Promise<void>;
  /**
   * Claims the next poll of a submitted run: false when it is not running or another job polled it less than
   * `minIntervalMs` ago (two poll chains collapse into one). `overdue`: its deadline has passed.
   */
  claimPoll(input: { runId: string; minIntervalMs: number }): Promise<{ claimed: boolean; overdue: boolean }>;
  /** Records that the cancel reached the other side. */
  markRemoteCancelled(runId: string): Promise<void>;
  /**
   * Ids of runs that need a job: `queued` for longer than `olderThanMs`, finished and never reported, submitted
   * runs whose polls went quiet for `stalePollMs`, and cancelled submitted runs whose cancel never reached the other side.
   */
  runsNeedingWork(input: { limit: number; olderThanMs: number; stalePollMs?: number }): Promise<string[]>;
}

export interface ToolQueue {
  /** Enqueues the run's job (payload: the run id; deduplicated per run). Fails fast when Redis is down. */
  enqueueToolRun(runId: string): Promise<void>;
  /** Enqueues the next poll of submitted background work, after `delayMs`. */
  enqueuePoll(runId: string, delayMs: number): Promise<void>;
}

/** A fork as its parent lists it. */
export interface ForkRecord {
  threadId: string;
  title: string;
  /** The parent's last seq the fork copied. */
  seq: number;
  createdAt: Date;
}

/** Another thread of the same owner holding a copy of a message (a fork, or the thread a fork copied it from). */
export interface MessageCopy {
  threadId: string;
  title: string;
  messageId: string;
  seq: number;
}

/** Forks: a new thread that starts as a copy of another's state at one of its messages. */
export interface ForkStore {
  /**
   * Creates the fork of `parentId` through `throughSeq`, in one statement whatever the transcript's length: the
   * transcript copied (search index rows included, nothing recounted), the parent's latest summary revision that covers
   * nothing after `throughSeq` and is not redacted, the window after it through `throughSeq`, the pins at or before it,
   * the settings; turns and reported tool runs of the copied messages get their own records. Nothing is written when
   * a turn of the parent that is queued or running has a message at or before `throughSeq` (`busy`), or when the
   * owner already has `maxThreads` threads (`quota`, exact under concurrent creations: the fork takes the owner's
   * thread-creation lock).
   */
  forkThread(input: {
    parentId: string;
    ownerId: string;
    throughSeq: number;
    title: string;
    maxThreads: number;
  }): Promise<{ thread: Thread } | { refused: 'busy' | 'quota'; owned: number }>;
  /**
   * An edit: the fork (as `forkThread`) and the edited text accepted as its first turn (as
   * `TurnStore.acceptUserMessage`), in one transaction: a refused accept leaves no fork. With a `clientMessageId`,
   * edits of one parent with that id take turns (a lock on both), and a later one finds the first's fork
   * (`existing`) instead of making another.
   */
  forkWithMessage(input: {
    parentId: string;
    ownerId: string;
    throughSeq: number;
    title: string;
    maxThreads: number;
    message: { content: string; tokens: number; encoding: string; clientMessageId: string | null; maxQueued: number };
  }): Promise<
    { thread: Thread; accepted: AcceptedMessage } | { existing: string } | { refused: 'busy' | 'quota'; owned: number }
  >;
  /** The forks of a thread, by fork point then age. */
  listForks(threadId: string): Promise<ForkRecord[]>;
  /** The fork of `parentId` holding a user message sent with `clientMessageId` (a repeated edit), if any. */
  findForkByClientMessageId(input: { parentId: string; clientMessageId: string }): Promise<string | null>;
  /** Copies of these messages that are not forgotten, in the owner's other threads (a fork and its parent share them). */
  listCopies(input: { messageIds: string[]; ownerId: string }): Promise<MessageCopy[]>;
}

/**
 * A user's saved memories (issue 27). Every read and write is scoped to `userId`: another user's item is not found.
 * Forgetting a message deletes the items whose source it is (MemoryStore.forget).
 */
export interface SavedMemoryStore {
  /** Newest first, pending and active. */
  list(userId: string): Promise<SavedMemory[]>;
  /**
   * Adds an item unless the user already has `maxItems`, pending ones included (then null; exact under concurrent
   * writes).
   */
  create(input: {
    userId: string;
    text: string;
    tokens: number;
    source: SavedMemorySource | null;
    maxItems: number;
    status: SavedMemoryStatus;
  }): Promise<SavedMemory | null>;
  /** Makes a pending item active; null when the user has no such item (an active one comes back unchanged). */
  approve(input: { userId: string; id: string }): Promise<SavedMemory | null>;
  /** Pending and active items of every user still counted for an earlier rendering, at most `limit`. */
  listStaleTokens(limit: number): Promise<{ id: string; text: string }[]>;
  /** Stores a recount for the rendering of now, unless the item changed meanwhile (its text is not `text`). */
  saveRecount(input: { id: string; text: string; tokens: number }): Promise<void>;
  /** Null when the user has no such item. */
  update(input: { userId: string; id: string; text: string; tokens: number }): Promise<SavedMemory | null>;
  /** False when the user has no such item (with `status`: no such item in that status). */
  remove(input: { userId: string; id: string; status?: SavedMemoryStatus }): Promise<boolean>;
  /** The owner of a thread and its newest user message with a seq (the source of an item the model saves). */
  sourceOfThread(threadId: string): Promise<{ userId: string; source: SavedMemorySource | null } | null>;
}
