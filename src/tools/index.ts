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
 * unless SAVE_MEMORY_TOOL is `off`.
 */
export function deploymentTools(options: { SAVE_MEMORY_TOOL?: 'on' | 'confirm' | 'off' } = {}): Tool[] {
  return [
    calculatorTool,
    currentTimeTool,
    readToolResultTool,
    analyzeThreadTool,
    searchTranscriptTool,
    ...(options.SAVE_MEMORY_TOOL === 'off' ? [] : [saveMemoryTool]),
  ];
}
