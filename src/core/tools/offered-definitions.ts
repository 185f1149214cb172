import type { RecallScope } from '../domain/types';
import type { OpenAIFunctionTool } from '../context/types';
import { withReadToolResultIf } from './built-in/read-tool-result';
import { definitionsForRecallScope } from './built-in/search-transcript';

/**
 * Our tools as a thread's chat calls are offered them: search_transcript described for the thread's recall scope
 * (definitionsForRecallScope), read_tool_result only when `readable` (the context holds a condensed result's handle:
 * holdsCondensedResult). The turn (which keeps its list per thread until the next fold), the token-count routes and
 * the context view all offer this list, so what they count is what a call sends.
 */
export function offeredDefinitions(
  definitions: readonly OpenAIFunctionTool[],
  scope: RecallScope,
  readable: boolean,
): OpenAIFunctionTool[] {
  return withReadToolResultIf(definitionsForRecallScope(definitions, scope), readable);
}
