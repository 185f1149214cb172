/** One of a user's saved memories (issue 27): a short text the model gets in every thread of the user. */
export interface SavedMemory {
  id: string;
  userId: string;
  text: string;
  /** Tokens of its line in the pack, counted when written. */
  tokens: number;
  /** The message that asked for it (the model's save_memory), null for one added by hand or once its thread is gone. */
  source: { threadId: string; seq: number } | null;
  /** `pending`: the model proposed it (SAVE_MEMORY_TOOL=confirm) and it reaches no prompt until its user approves it. */
  status: SavedMemoryStatus;
  createdAt: Date;
  updatedAt: Date;
}

/** `active` items go into the packs; `pending` ones wait for their user's approval. */
export type SavedMemoryStatus = 'pending' | 'active';

/** Where a saved memory came from: the message that asked the model to remember it. */
export interface SavedMemorySource {
  threadId: string;
  seq: number;
  messageId: string;
}

/** Longest text a saved memory may have (characters). */
export const SAVED_MEMORY_MAX_CHARS = 1000;
