import type { Thread } from '../domain/types';

/** What an automatic title is made from (ThreadTitleStore.firstExchange). */
export interface FirstExchange {
  /** The thread's first user message. */
  userText: string;
  /** The first complete answer after it; null when there is none (yet). */
  answerText: string | null;
  /** A branch: its title ends in " (branch)". */
  branch: boolean;
  /** A thread of an OpenAI client (/v1): its client makes its own titles, so ours costs no model call. */
  openaiClient: boolean;
}

/** Automatic chat titles (core/titles): read the first exchange of an untitled thread, write its title. */
export interface ThreadTitleStore {
  /** The thread's first exchange while its title is still the default one; null when titled or gone. */
  firstExchange(threadId: string): Promise<FirstExchange | null>;
  /**
   * Sets an automatic title only over the default one (a conditional update: a rename that came first wins);
   * the updated thread, or null when it was titled meanwhile or is gone.
   */
  setAutomaticTitle(threadId: string, title: string): Promise<Thread | null>;
}
