import type { Thread } from '../domain';

/** What a pack carries instead of a summary withdrawn after a forget, until the rebuild commits. */
export const MEMORY_REBUILDING_NOTE =
  'The memory of the earlier part of this conversation is being rebuilt after the user deleted a message; ' +
  'it is not available right now. Do not guess what was said earlier.';

/**
 * True while the thread's summary is withdrawn: a forgotten message was covered by it, so its text was cleared
 * (kept only as redacted revisions) and a rebuild from the remaining transcript is pending. Derived from the state:
 * a summary that covers messages at or after the context start but has no text. (A fresh context also clears the
 * text, but moves the context start past the coverage, so it never reads as withdrawn.)
 */
export function isSummaryWithdrawn(thread: Pick<Thread, 'summary' | 'contextStartSeq'>): boolean {
  const summary = thread.summary;
  return (
    summary !== null &&
    summary.revision > 0 &&
    summary.text === '' &&
    summary.coveredThroughSeq >= thread.contextStartSeq
  );
}
