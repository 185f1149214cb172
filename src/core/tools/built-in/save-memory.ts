import { z } from 'zod';
import { quotedSavedMemory } from '../../context/saved-memories-section';
import { SAVED_MEMORY_MAX_CHARS } from '../../saved-memories/saved-memory';
import { defineTool } from '../types';

/**
 * How a note about a saved memory begins: the transcript shows it, and on /v1 it is a line of the answer (so the
 * client's next history holds it: src/core/facade/client-view.ts).
 */
export const MEMORY_NOTE_MARK = '[memory]';

/** The transcript note announcing a saved memory (one line: the text quoted). */
export function savedMemoryNote(text: string): string {
  return `${MEMORY_NOTE_MARK} Saved to your memories: ${quotedSavedMemory(text)}`;
}

/** The transcript note announcing a proposal (SAVE_MEMORY_TOOL=confirm), waiting for the user's approval. */
export function proposedMemoryNote(text: string): string {
  return `${MEMORY_NOTE_MARK} Proposed for your saved memories (approve or dismiss it in Saved memories): ${quotedSavedMemory(text)}`;
}

/** Whether a transcript text is a saved memory's note (a server-written system message of an answer). */
export function isMemoryNote(text: string): boolean {
  return text.startsWith(`${MEMORY_NOTE_MARK} `);
}

/**
 * Saves one of the user's saved memories (issue 27): a short fact the model then gets in every conversation of the
 * user. Its source is the message that asked; the transcript shows a note, and the user manages items in Saved
 * memories. Under SAVE_MEMORY_TOOL=confirm (the default) the item is a proposal that reaches no prompt until the user
 * approves it.
 */
export const saveMemoryTool = defineTool({
  name: 'save_memory',
  shortDescription: 'Saves one sentence about the user, only when they ask you to remember it.',
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
    const { saved } = outcome;
    if (saved.status === 'pending') {
      context.announce?.(proposedMemoryNote(saved.text));
      return `Proposed to the user's saved memories (item ${saved.id}): ${quotedSavedMemory(saved.text)}. It is not saved yet: the user approves or dismisses it in Saved memories, and only then will you see it in their conversations.`;
    }
    context.announce?.(savedMemoryNote(saved.text));
    return `Saved to the user's memories (item ${saved.id}): ${quotedSavedMemory(saved.text)}. You will see it in every conversation with this user.`;
  },
});
