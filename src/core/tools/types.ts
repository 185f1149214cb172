import type { z } from 'zod';
import type { TokenCounter } from '../context';
import type { TranscriptMessage } from '../domain/types';
import type { ToolRunStatus, TranscriptSearch } from '../ports';

/** Where a tool runs: inside the turn (`inline`) or as a persistent run in the tools worker (`async`). */
export type ToolMode = 'inline' | 'async';

export const TERMINAL_RUN_STATUSES: readonly ToolRunStatus[] = ['succeeded', 'failed', 'timed_out', 'cancelled'];

/** What a tool may read of the world besides its arguments (implemented by the db layer). */
export interface ToolServices {
  /** The full stored result behind a handle (an async run id, or the id of an inline tool message) of this thread. */
  readStoredResult(input: { threadId: string; handle: string }): Promise<{ name: string; text: string } | null>;
  /** The thread's transcript in ascending seq, a page at a time (messages with seq > afterSeq). */
  listTranscript(input: { threadId: string; afterSeq: number; limit: number }): Promise<TranscriptMessage[]>;
  /** Full-text search of the thread's transcript as the model may see it (from its context start on). */
  search: Pick<TranscriptSearch, 'searchForModel' | 'messagesAt'> & {
    /** The owner's other threads, per the thread's recall scope (absent where not wired: this thread only). */
    searchElsewhere?(input: {
      threadId: string;
      query: string;
      limit: number;
    }): ReturnType<TranscriptSearch['searchElsewhere']>;
  };
  /**
   * Saves one of the thread owner's saved memories, its source the thread's newest user message (save_memory);
   * `pending`: a proposal the user approves first (SAVE_MEMORY_TOOL=confirm). Absent where saved memories are not
   * wired (a refusal is told to the model).
   */
  saveMemory?(input: {
    threadId: string;
    text: string;
  }): Promise<{ saved: { id: string; text: string; status: 'pending' | 'active' } } | { refused: string }>;
}

/** Everything a tool gets besides its arguments. */
export interface ToolContext {
  threadId: string;
  /** The persistent run id of an async call; null inline. */
  runId: string | null;
  /** Aborted on timeout, cancel or shutdown: a well-behaved tool stops promptly. */
  signal: AbortSignal;
  /** Progress between 0 and 1 with an optional short note (async runs stream it to the transcript; inline it is ignored). */
  reportProgress(progress: number, note?: string): Promise<void>;
  services: ToolServices;
  counter: TokenCounter;
  /** TOOL_RESULT_INLINE_TOKENS: results above it are condensed before they enter the context. */
  inlineTokens: number;
  now(): Date;
  /**
   * A short note people see in the transcript after the tool's answer (a system message the model is not sent again),
   * e.g. "[memory] Saved to your memories: …". Inline calls only; absent elsewhere.
   */
  announce?(text: string): void;
}

/** Where a tool comes from (shown to admins; MCP and external tools are configured, not compiled in). */
export type ToolSource =
  { kind: 'built-in' } | { kind: 'mcp'; server: string; tool: string } | { kind: 'external'; url: string };

/** How work that runs elsewhere (an MCP task, an external runner) is going, as one poll sees it. */
export type BackgroundStatus =
  | { state: 'working'; progress?: number; note?: string }
  | { state: 'succeeded'; text: string }
  | { state: 'failed' | 'cancelled'; error: string };

/** What background work gets besides its arguments. */
export interface BackgroundContext {
  runId: string;
  threadId: string;
  signal: AbortSignal;
  /** Progress reported by the other side while the submitting process is alive (MCP progress notifications). */
  reportProgress(progress: number, note?: string): Promise<void>;
}

/**
 * A tool whose work runs elsewhere: the tools job submits it and ends (no worker slot is held while it works);
 * later jobs poll it by its task id, cancel it, or (external runners) wait for its signed callback.
 */
export interface BackgroundWork {
  /** Starts the work; resolves with the id the other side knows it by (stored on the run). */
  submit(args: Record<string, unknown>, context: BackgroundContext): Promise<{ taskId: string }>;
  /**
   * Set when the id is chosen here, before the other side hears of the work (external runners: the run id, which is
   * the request's idempotency key). The id and the deadline are then stored BEFORE `submit`: a report that arrives
   * before `submit` returned finds its run handed over, and a worker that died before the other side answered
   * submits again with the same key (the other side treats a repeated key as the same work) instead of starting
   * a second run.
   */
  presetTaskId?(runId: string): string;
  /** How the work is going (MCP tasks/get, tasks/result); absent when results come back by callback. */
  poll?(taskId: string, context: BackgroundContext): Promise<BackgroundStatus>;
  /** Asks the other side to stop (MCP tasks/cancel, or a POST to the runner); errors are logged, not fatal. */
  cancel(taskId: string, context: BackgroundContext): Promise<void>;
  /** How long between polls (or deadline checks). */
  pollIntervalMs: number;
}

/** A tool the model may call. Register deployment tools in src/tools/index.ts. */
export interface Tool<Schema extends z.ZodType = z.ZodType> {
  /** `^[a-zA-Z0-9_-]{1,64}$` (OpenAI's rule). */
  name: string;
  description: string;
  /**
   * The description offered in small windows (SHORT_TOOL_SCHEMA_WINDOW tokens or less: see shortToolSchema), where
   * the parameters' own descriptions are left out too. Default: `description`'s first sentence.
   */
  shortDescription?: string;
  /** Arguments; converted to the OpenAI JSON schema with `z.toJSONSchema`. */
  schema: Schema;
  /** The JSON schema offered to the model instead of the zod one's (MCP and external tools bring their own). */
  parameters?: Record<string, unknown>;
  /** Default built-in. */
  source?: ToolSource;
  /** Set for work that runs elsewhere (MCP tasks over Streamable HTTP, external runners): `run` is not used then. */
  background?: BackgroundWork;
  mode: ToolMode;
  /** Per-tool time limit. Default: 30 s inline, TOOL_TIMEOUT_MS async. */
  timeoutMs?: number;
  /**
   * Default true: a result above TOOL_RESULT_INLINE_TOKENS is condensed by the summary model. A tool that already
   * bounds its output to the inline size (read_tool_result) turns it off.
   */
  condense?: boolean;
  /** Returns the result text; throwing reports the error to the model as the call's result. */
  run(args: z.output<Schema>, context: ToolContext): Promise<string>;
}

/** Builds a tool with its argument types inferred from the schema. */
export function defineTool<Schema extends z.ZodType>(tool: Tool<Schema>): Tool {
  return tool as unknown as Tool;
}
