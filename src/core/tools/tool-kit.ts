import type { CondenseDeps } from './condense-tool-result';
import type { ToolRegistry } from './tool-registry';
import type { ToolServices } from './types';
import type { ToolQueue, ToolRunStore } from '../ports';

export interface ToolLimits {
  /** MAX_TOOL_CALLS_PER_MESSAGE */
  callsPerMessage: number;
  /** MAX_TOOL_FOLLOW_UPS: follow-up turns in a row that are offered tools again. */
  followUps: number;
  /** MAX_ASYNC_RUNS_PER_THREAD, MAX_ASYNC_RUNS_PER_USER: async runs not yet finished. */
  asyncRunsPerThread: number;
  asyncRunsPerUser: number;
}

/** Everything the turn runner needs to offer and run tools. */
export interface ToolKit {
  registry: ToolRegistry;
  runs: ToolRunStore;
  queue: ToolQueue;
  services: ToolServices;
  condense: Omit<CondenseDeps, 'counter' | 'log'>;
  /** MAX_TOOL_ROUNDS: rounds of tool calls per turn; the call after the last round offers no tools. Default 8. */
  maxRounds: number;
  /** Caps of one user's tool work; calls past them are answered "not run" with the reason (see answer-tool-calls). */
  limits: ToolLimits;
  /** Time limit of an inline tool without its own. Default 30 s. */
  inlineTimeoutMs: number;
  /** TOOL_RESULT_MAX_CHARS: above it a result is truncated in the transcript too. */
  maxResultChars: number;
}
