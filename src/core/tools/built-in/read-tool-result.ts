import { z } from 'zod';
import { HANDLE_LINE_CALL } from '../condense-tool-result';
import { ToolError } from '../tool-error';
import type { ThreadContext } from '../../domain/types';
import { defineTool } from '../types';

/** Tokens kept free for the header and the continuation line of a slice. */
const FRAME_TOKENS = 80;

/**
 * Reads any part of a stored tool result (the transcript keeps every result in full; the context may hold a
 * condensed version). The slice is shortened so it fits TOOL_RESULT_INLINE_TOKENS, and says where to continue.
 */
export const readToolResultTool = defineTool({
  name: 'read_tool_result',
  shortDescription: 'Reads more of a condensed tool result by its handle.',
  description:
    'Reads part of the full text of a condensed tool result, by the handle given with it, and says where to continue.',
  schema: z.object({
    handle: z.string().uuid().describe('The handle given with the result'),
    offset: z.number().int().min(0).default(0).describe('First character to read (0-based)'),
    length: z.number().int().min(1).max(20_000).default(4000).describe('How many characters to read'),
  }),
  mode: 'inline',
  condense: false,
  timeoutMs: 5000,
  async run({ handle, offset, length }, context) {
    const stored = await context.services.readStoredResult({ threadId: context.threadId, handle });
    if (!stored) throw new ToolError(`No stored tool result with handle ${handle} in this conversation`);
    const total = stored.text.length;
    if (offset >= total)
      return `The result of ${stored.name} (${handle}) has ${total} characters; offset ${offset} is past its end.`;
    const room = Math.max(50, context.inlineTokens - FRAME_TOKENS);
    // Start near the room (about 4 characters a token) so counting stays cheap on huge requests.
    let end = Math.min(total, offset + length, offset + room * 4);
    while (end > offset + 1 && context.counter.countText(stored.text.slice(offset, end)) > room) {
      end = offset + Math.max(1, Math.floor((end - offset) * 0.8));
    }
    const header = `Characters ${offset}–${end} of ${total} of the result of ${stored.name} (${handle}):`;
    const more =
      end < total ? `\n[Continue with read_tool_result(handle="${handle}", offset=${end})]` : '\n[End of the result]';
    return `${header}\n${stored.text.slice(offset, end)}${more}`;
  },
});

/**
 * Whether a thread's context (its pinned and window entries, its summary) holds a condensed tool result's handle
 * line, which names read_tool_result: only then has the tool anything to read, so only then is it offered (its schema
 * is in every prompt it is offered in).
 */
export function holdsCondensedResult(context: Pick<ThreadContext, 'pinned' | 'window' | 'thread'>): boolean {
  const handleIn = (entry: { role: string; content: string }) =>
    (entry.role === 'tool' || entry.role === 'system') && entry.content.includes(HANDLE_LINE_CALL);
  return (
    context.pinned.some(handleIn) ||
    context.window.some(handleIn) ||
    (context.thread.summary?.text.includes(HANDLE_LINE_CALL) ?? false)
  );
}

/** `definitions` without read_tool_result unless `readable` (holdsCondensedResult). */
export function withReadToolResultIf<T extends { function: { name: string } }>(
  definitions: readonly T[],
  readable: boolean,
): T[] {
  return definitions.filter((definition) => readable || definition.function.name !== readToolResultTool.name);
}
