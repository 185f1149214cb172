export { defineTool, TERMINAL_RUN_STATUSES } from './types';
export type { Tool, ToolContext, ToolMode, ToolServices } from './types';
export { createToolRegistry, toParametersSchema } from './tool-registry';
export { shortToolSchema, SHORT_TOOL_SCHEMA_WINDOW } from './short-tool-schema';
export type { ToolRegistry } from './tool-registry';
export { executeTool, publicToolError, validateArguments, ToolCancelledError, ToolTimeoutError } from './execute-tool';
export { ToolError } from './tool-error';
export type { ToolOutcome } from './execute-tool';
export { condenseToolResult, cutToTokens, handleLine, truncateResult } from './condense-tool-result';
export type { CondenseDeps } from './condense-tool-result';
export { runAsyncTool, runReportHeader } from './run-async-tool';
export type { AsyncToolDeps, AsyncToolOutcome } from './run-async-tool';
export { toToolRunDto } from './to-tool-run-dto';
export { cancelToolRun } from './cancel-tool-run';
export type { ToolKit } from './tool-kit';
export { calculatorTool } from './built-in/calculator';
export { currentTimeTool } from './built-in/current-time';
export { holdsCondensedResult, readToolResultTool } from './built-in/read-tool-result';
export { offeredDefinitions } from './offered-definitions';
export { analyzeThreadTool } from './built-in/analyze-thread';
export {
  definitionsForRecallScope,
  searchTranscriptDescription,
  searchTranscriptTool,
  renderMatches,
} from './built-in/search-transcript';
export {
  isMemoryNote,
  MEMORY_NOTE_MARK,
  proposedMemoryNote,
  saveMemoryTool,
  savedMemoryNote,
} from './built-in/save-memory';
export { evaluateExpression, ExpressionError, formatNumber } from './built-in/evaluate-expression';
export { acceptRunnerReport } from './accept-runner-report';
export type { RunnerReport } from './accept-runner-report';
export { runBackgroundTool, cancelRemote } from './run-background-tool';
export { cancelRemoteWork } from './cancel-remote-work';
export type { BackgroundStatus, BackgroundWork, BackgroundContext, ToolSource } from './types';
export type { RegisteredTool } from './tool-registry';
