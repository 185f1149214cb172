import { Router } from 'express';
import { AppError } from '../../core/errors/app-error';
import { toThreadDto } from '../../core/dto/api-dto';
import type { ThreadDetailDto } from '../../shared/api';
import type { ErrorBody } from '../../shared/errors';
import { foldDecisionFor } from '../../core/thread-context/context-settings';
import { principalOf } from '../authenticate';
import type { HttpDeps } from '../http-deps';
import { createThreadBody, listThreadsQuery, parseOrThrow, renameThreadBody, threadIdParams } from '../request-schemas';

/**
 * What a user is told about a failed fold. The stored text is the job's own error (a provider message may quote
 * the endpoint, its configuration or other input): admins read it in /api/admin/threads/:id.
 */
export const FOLD_FAILED_FOR_USERS: ErrorBody = {
  code: 'UNAVAILABLE',
  message:
    'The summary could not be updated: answers keep using the previous summary and the recent messages, and the summary is retried later.',
};

/** Loads a thread of the caller or 404 (another user's thread is indistinguishable from a missing one). */
export async function ownThread(deps: Pick<HttpDeps, 'threads'>, threadId: unknown, userId: string) {
  const { id } = parseOrThrow(threadIdParams, { id: threadId }, 'thread id');
  const thread = await deps.threads.findThread(id, userId);
  if (!thread) throw new AppError('NOT_FOUND', 'No such thread.');
  return thread;
}

export function threadRoutes(deps: HttpDeps): Router {
  const router = Router();

  router.post('/threads', async (request, response) => {
    const body = parseOrThrow(createThreadBody, request.body ?? {}, 'thread');
    const thread = await deps.threads.createThread({
      ownerId: principalOf(response).userId,
      maxThreads: deps.limits.maxThreadsPerUser,
      ...(body.title ? { title: body.title } : {}),
    });
    response.status(201).json(toThreadDto(thread));
  });

  router.get('/threads', async (request, response) => {
    const query = parseOrThrow(listThreadsQuery, request.query, 'query');
    const page = await deps.threads.listThreads({
      ownerId: principalOf(response).userId,
      limit: query.limit,
      ...(query.cursor ? { cursor: query.cursor } : {}),
    });
    response.json({ threads: page.items.map(toThreadDto), nextCursor: page.nextCursor });
  });

  router.get('/threads/:id', async (request, response) => {
    const owned = await ownThread(deps, request.params.id, principalOf(response).userId);
    const [messageCount, context] = await Promise.all([
      deps.threads.countMessages(owned.id),
      deps.turns.loadContext(owned.id),
    ]);
    // The summary and the window from one snapshot (the context read): a fold committing after the ownership check
    // would otherwise show its shorter window with the previous summary (no summary, no fold pending).
    const thread = context?.thread ?? owned;
    const windowTokens = context?.window.reduce((sum, entry) => sum + entry.tokens, 0) ?? 0;
    const foldPending = context ? foldDecisionFor(context, deps.settings).fold : false;
    const detail: ThreadDetailDto = {
      ...toThreadDto(thread),
      messageCount,
      context: {
        summaryTokens: thread.summary?.tokens ?? 0,
        coveredThroughSeq: thread.summary?.coveredThroughSeq ?? 0,
        revision: thread.summary?.revision ?? 0,
        windowEntries: context?.window.length ?? 0,
        windowTokens,
        foldPending,
        lastFoldAt: thread.lastFoldAt?.toISOString() ?? null,
        lastFoldError: thread.lastFoldError === null ? null : FOLD_FAILED_FOR_USERS,
      },
    };
    response.json(detail);
  });

  router.patch('/threads/:id', async (request, response) => {
    const thread = await ownThread(deps, request.params.id, principalOf(response).userId);
    const body = parseOrThrow(renameThreadBody, request.body, 'thread');
    const renamed = toThreadDto(await deps.threads.renameThread(thread.id, body.title));
    deps.events.publish({ type: 'thread-updated', threadId: thread.id, thread: renamed });
    response.json(renamed);
  });

  router.delete('/threads/:id', async (request, response) => {
    const thread = await ownThread(deps, request.params.id, principalOf(response).userId);
    await deps.deleteThread(thread.id);
    response.status(204).end();
  });

  return router;
}
