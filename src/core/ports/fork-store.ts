import type { Thread } from '../domain/types';
import type { AcceptedMessage } from './turn-store';

/** A fork as its parent lists it. */
export interface ForkRecord {
  threadId: string;
  title: string;
  /** The parent's last seq the fork copied. */
  seq: number;
  createdAt: Date;
}

/** Another thread of the same owner holding a copy of a message (a fork, or the thread a fork copied it from). */
export interface MessageCopy {
  threadId: string;
  title: string;
  messageId: string;
  seq: number;
}

/** Forks: a new thread that starts as a copy of another's state at one of its messages. */
export interface ForkStore {
  /**
   * Creates the fork of `parentId` through `throughSeq`, in one statement whatever the transcript's length: the
   * transcript copied (search index rows included, nothing recounted), the parent's latest summary revision that covers
   * nothing after `throughSeq` and is not redacted, the window after it through `throughSeq`, the pins at or before it,
   * the settings; turns and reported tool runs of the copied messages get their own records. Nothing is written when
   * a turn of the parent that is queued or running has a message at or before `throughSeq` (`busy`), or when the
   * owner already has `maxThreads` threads (`quota`, exact under concurrent creations: the fork takes the owner's
   * thread-creation lock).
   */
  forkThread(input: {
    parentId: string;
    ownerId: string;
    throughSeq: number;
    title: string;
    maxThreads: number;
  }): Promise<{ thread: Thread } | { refused: 'busy' | 'quota'; owned: number }>;
  /**
   * An edit: the fork (as `forkThread`) and the edited text accepted as its first turn (as
   * `TurnStore.acceptUserMessage`), in one transaction: a refused accept leaves no fork. With a `clientMessageId`,
   * edits of one parent with that id take turns (a lock on both), and a later one finds the first's fork
   * (`existing`) instead of making another.
   */
  forkWithMessage(input: {
    parentId: string;
    ownerId: string;
    throughSeq: number;
    title: string;
    maxThreads: number;
    message: { content: string; tokens: number; encoding: string; clientMessageId: string | null; maxQueued: number };
  }): Promise<
    { thread: Thread; accepted: AcceptedMessage } | { existing: string } | { refused: 'busy' | 'quota'; owned: number }
  >;
  /** The forks of a thread, by fork point then age. */
  listForks(threadId: string): Promise<ForkRecord[]>;
  /** The fork of `parentId` holding a user message sent with `clientMessageId` (a repeated edit), if any. */
  findForkByClientMessageId(input: { parentId: string; clientMessageId: string }): Promise<string | null>;
  /** Copies of these messages that are not forgotten, in the owner's other threads (a fork and its parent share them). */
  listCopies(input: { messageIds: string[]; ownerId: string }): Promise<MessageCopy[]>;
}
