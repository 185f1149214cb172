import { z } from 'zod';
import { SAVED_MEMORY_MAX_CHARS } from '../../saved-memories/saved-memory';
import { defineTool } from '../types';

/** The transcript note announcing a saved memory. */
export function savedMemoryNote(text: string): string {
  return `Saved to your memories: "${text}"`;
}

/**
 * Saves one of the user's saved memories (issue 27): a short fact the model then gets in every conversation of the
 * user. Its source is the message that asked; the transcript shows a note, and the user manages items in Saved memories.
 */
export const saveMemoryTool = defineTool({
  name: 'save_memory',
  description:
    'Saves a fact about the user that you will see in every conversation with them. Only when the user asks you to remember something ("remember that I am vegetarian"); one self-contained sentence.',
  schema: z.object({
    text: z
      .string()
      .trim()
      .min(1)
      .max(SAVED_MEMORY_MAX_CHARS)
      .describe('The fact to remember, e.g. "The user is vegetarian."'),
  }),
  mode: 'inline',
  condense: false,
  timeoutMs: 5000,
  async run({ text }, context) {
    const save = context.services.saveMemory;
    if (!save) return 'Not saved: saved memories are not available here.';
    const outcome = await save({ threadId: context.threadId, text });
    if ('refused' in outcome) return `Not saved: ${outcome.refused}`;
    context.announce?.(savedMemoryNote(outcome.saved.text));
    return `Saved to the user's memories (item ${outcome.saved.id}): "${outcome.saved.text}". You will see it in every conversation with this user.`;
  },
});
