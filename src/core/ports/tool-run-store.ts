import type { TranscriptMessage, Turn } from '../domain/types';

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

/** Where an async tool run stands. */
export type ToolRunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'timed_out' | 'cancelled';

/** A persistent async tool run, as the domain sees it (never a Prisma row). */
export interface ToolRun {
  id: string;
  threadId: string;
  /** The assistant message that made the call. */
  messageId: string;
  toolCallId: string;
  name: string;
  args: Record<string, unknown>;
  status: ToolRunStatus;
  progress: number;
  progressNote: string | null;
  /** The full result as stored in the transcript (truncated above TOOL_RESULT_MAX_CHARS). */
  result: string | null;
  resultTokens: number | null;
  /** What entered the context, when the result was condensed. */
  condensed: string | null;
  error: string | null;
  startedAtSeq: number;
  cancelRequested: boolean;
  attempts: number;
  reportedAt: Date | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** Background work: its id on the other side (MCP task id; the run id for external runners), once submitted. */
  taskId: string | null;
  /** Background work: when it times out (Postgres' clock). */
  deadlineAt: Date | null;
  /** Background work: when the cancel was sent to the other side. */
  remoteCancelledAt: Date | null;
  /**
   * Background work with a preset task id: when the other side acknowledged the run request. Null while it has not
   * (a retry submits again, with the same idempotency key).
   */
  handedAt: Date | null;
}

/** The caps `ToolRunStore.createRun` enforces atomically: the running runs of a thread and of its owner. */
export interface AsyncRunCaps {
  ownerId: string;
  /** MAX_ASYNC_RUNS_PER_THREAD. */
  perThread: number;
  /** MAX_ASYNC_RUNS_PER_USER. */
  perUser: number;
}
