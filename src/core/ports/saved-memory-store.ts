/**
 * A user's saved memories (issue 27). Every read and write is scoped to `userId`: another user's item is not found.
 * Forgetting a message deletes the items whose source it is (MemoryControlsStore.forget).
 */
export interface SavedMemoryStore {
  /** Newest first, pending and active. */
  list(userId: string): Promise<SavedMemory[]>;
  /**
   * Adds an item unless the user already has `maxItems`, pending ones included (then null; exact under concurrent
   * writes).
   */
  create(input: {
    userId: string;
    text: string;
    tokens: number;
    source: SavedMemorySource | null;
    maxItems: number;
    status: SavedMemoryStatus;
  }): Promise<SavedMemory | null>;
  /** Makes a pending item active; null when the user has no such item (an active one comes back unchanged). */
  approve(input: { userId: string; id: string }): Promise<SavedMemory | null>;
  /** Pending and active items of every user still counted for an earlier rendering, at most `limit`. */
  listStaleTokens(limit: number): Promise<{ id: string; text: string }[]>;
  /** Stores a recount for the rendering of now, unless the item changed meanwhile (its text is not `text`). */
  saveRecount(input: { id: string; text: string; tokens: number }): Promise<void>;
  /** Null when the user has no such item. */
  update(input: { userId: string; id: string; text: string; tokens: number }): Promise<SavedMemory | null>;
  /** False when the user has no such item (with `status`: no such item in that status). */
  remove(input: { userId: string; id: string; status?: SavedMemoryStatus }): Promise<boolean>;
  /** The owner of a thread and its newest user message with a seq (the source of an item the model saves). */
  sourceOfThread(threadId: string): Promise<{ userId: string; source: SavedMemorySource | null } | null>;
}

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
