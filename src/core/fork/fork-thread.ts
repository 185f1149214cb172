import type { Thread } from '../domain/types';
import { threadQuotaExceeded } from '../limits/thread-quota';
import { AppError } from '../errors/app-error';
import { spendOrRefuse } from '../turn/spend-or-refuse';
import type { ForkDeps } from './fork-deps';
import { forkPointOf } from './fork-point';

/** Longest thread title (as the REST schemas accept it). */
const MAX_TITLE = 200;
const SUFFIX = ' (branch)';

/** A fork's title: its parent's, marked as a branch. */
export function forkTitle(parentTitle: string): string {
  return `${parentTitle.slice(0, MAX_TITLE - SUFFIX.length)}${SUFFIX}`;
}

/** The refusal when a turn at or before the fork point is still queued or running (nothing was written). */
export const FORK_BUSY = 'An answer at or before this point is still being written; branch once it is done.';

/**
 * Refuses (TOO_LARGE) a fork that would copy more than FORK_MAX_MESSAGES transcript messages: each fork copies its
 * messages, turns, runs and revisions, so the copy of one is bounded.
 */
export function assertForkSize(throughSeq: number, maxForkMessages: number): void {
  if (throughSeq <= maxForkMessages) return;
  throw new AppError(
    'TOO_LARGE',
    `A branch here would copy ${throughSeq} messages, more than one branch may copy (FORK_MAX_MESSAGES = ${maxForkMessages}); branch at an earlier message or start a new thread.`,
  );
}

/** Writes the fork of `parent` through `throughSeq`, or throws why not (BUSY, QUOTA_EXCEEDED). */
export async function writeFork(
  input: { parent: Thread; throughSeq: number },
  deps: Pick<ForkDeps, 'forks' | 'maxThreadsPerUser'>,
): Promise<Thread> {
  const { parent, throughSeq } = input;
  const result = await deps.forks.forkThread({
    parentId: parent.id,
    ownerId: parent.ownerId,
    throughSeq,
    title: forkTitle(parent.title),
    maxThreads: deps.maxThreadsPerUser,
  });
  if ('thread' in result) return result.thread;
  if (result.refused === 'quota') {
    throw threadQuotaExceeded(result.owned, deps.maxThreadsPerUser, 'branch');
  }
  throw new AppError('BUSY', FORK_BUSY);
}

/**
 * Forks the user's thread at one of its messages (POST /api/threads/:id/fork): a new thread of the same owner whose
 * transcript, summary, window, pins and settings are the parent's as they stood at that message (see
 * ForkStore.forkThread). From then on the two are independent. NOT_FOUND for another user's thread or message;
 * TOO_LARGE past FORK_MAX_MESSAGES; RATE_LIMITED past FORKS_PER_MINUTE (spent once the fork point is known to be
 * valid).
 */
export async function forkThread(
  input: { userId: string; threadId: string; atMessageId: string },
  deps: ForkDeps,
): Promise<Thread> {
  const parent = await deps.threads.findThread(input.threadId, input.userId);
  if (!parent) throw new AppError('NOT_FOUND', 'No such thread.');
  const message = await deps.transcript.findMessage(parent.id, input.atMessageId);
  if (!message) throw new AppError('NOT_FOUND', 'No such message in this thread.');
  const throughSeq = await forkPointOf(message, deps.memory);
  assertForkSize(throughSeq, deps.maxForkMessages);
  await spendOrRefuse(deps.forkLimiter, input.userId, 'branches');
  await deps.guards.beforeNewThread(input.userId);
  const fork = await writeFork({ parent, throughSeq }, deps);
  deps.log.info({ threadId: parent.id, forkId: fork.id, throughSeq }, 'thread forked');
  return fork;
}
