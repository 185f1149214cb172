import type { Thread } from '../domain/types';
import type { Page } from './page';

export interface ThreadStore {
  ensureUser(userId: string, kind: 'guest' | 'external'): Promise<void>;
  /** QUOTA_EXCEEDED when the owner already has `maxThreads` threads (MAX_THREADS_PER_USER); exact under races. */
  createThread(input: { ownerId: string; title?: string; maxThreads: number }): Promise<Thread>;
  /** The thread if it exists and belongs to `ownerId` (any owner when ownerId is null). */
  findThread(threadId: string, ownerId: string | null): Promise<Thread | null>;
  listThreads(input: { ownerId: string; cursor?: string; limit: number }): Promise<Page<Thread>>;
  /** A user's title: it is never replaced by an automatic one. */
  renameThread(threadId: string, title: string): Promise<Thread>;
  /**
   * Deletes the thread and everything of it, but its model-call records: they stay with their user and figures, without
   * the thread or any of its content, so the costs of earlier days never shrink.
   */
  deleteThread(threadId: string): Promise<void>;
  countMessages(threadId: string): Promise<number>;
}
