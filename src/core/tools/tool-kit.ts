import type { CondenseDeps } from './condense-tool-result';
import type { ToolRegistry } from './tool-registry';
import type { ToolServices } from './types';
import type { ToolQueue, ToolRunStore } from '../ports';

/** Everything the turn runner needs to offer and run tools. */
export interface ToolKit {
  registry: ToolRegistry;
  runs: ToolRunStore;
  queue: ToolQueue;
  services: ToolServices;
  condense: Omit<CondenseDeps, 'counter' | 'log'>;
  /** MAX_TOOL_ROUNDS: rounds of tool calls per turn; the call after the last round offers no tools. Default 8. */
  maxRounds: number;
  /** Time limit of an inline tool without its own. Default 30 s. */
  inlineTimeoutMs: number;
  /** TOOL_RESULT_MAX_CHARS: above it a result is truncated in the transcript too. */
  maxResultChars: number;
}
