import type { OptionalTool } from '../config/env';
import {
  analyzeThreadTool,
  calculatorTool,
  currentTimeTool,
  readToolResultTool,
  saveMemoryTool,
  searchTranscriptTool,
  type Tool,
} from '../core/tools';

/**
 * The one place a deployment registers its tools: add yours to this list (see src/core/tools/types.ts for the
 * shape, and the built-ins for examples). Every tool here is offered to the model on every chat call; save_memory
 * unless SAVE_MEMORY_TOOL is `off`, calculator, current_time and analyze_thread unless TOOLS_OFF names them.
 */
export function deploymentTools(
  options: { SAVE_MEMORY_TOOL?: 'on' | 'confirm' | 'off'; TOOLS_OFF?: readonly OptionalTool[] } = {},
): Tool[] {
  const off = new Set<string>(options.TOOLS_OFF ?? []);
  return [
    calculatorTool,
    currentTimeTool,
    readToolResultTool,
    analyzeThreadTool,
    searchTranscriptTool,
    ...(options.SAVE_MEMORY_TOOL === 'off' ? [] : [saveMemoryTool]),
  ].filter((tool) => !off.has(tool.name));
}
