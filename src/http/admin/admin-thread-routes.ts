import { Router, type Request, type Response } from 'express';
import { toAdminThreadDto, toRevisionDtos, toRevisionInfoDto } from '../../core/admin/admin-dto';
import { foldDecisionFor } from '../../core/thread-context/context-settings';
import { toThreadDto } from '../../core/dto/api-dto';
import { AppError } from '../../core/errors/app-error';
import { updateThreadSettings } from '../../core/memory';
import { correctSummary } from '../../core/summary/correct-summary';
import type {
  AdminThreadDetailDto,
  AdminThreadPageDto,
  SummaryCorrectedDto,
  SummaryJobAcceptedDto,
  SummaryRevisionListDto,
} from '../../shared/admin-api';
import type { MessageContextDto } from '../../shared/api';
import { withLimits } from '../routes/context-routes';
import type { HttpDeps } from '../http-deps';
import { messageIdParams, parseOrThrow, threadIdParams, threadSettingsBody } from '../request-schemas';
import { contextPreview } from '../routes/context-routes';
import { patchOf, settingsDto } from '../routes/memory-routes';
import { adminOf } from './admin-auth';
import { adminThreadsQuery, correctSummaryBody, summaryRevisionsQuery } from './admin-request-schemas';
import { onQueue } from './on-queue';

/** Any user's thread, or 404. */
async function anyThread(deps: Pick<HttpDeps, 'threads'>, threadId: unknown) {
  const { id } = parseOrThrow(threadIdParams, { id: threadId }, 'thread id');
  const thread = await deps.threads.findThread(id, null);
  if (!thread) throw new AppError('NOT_FOUND', 'No such thread.');
  return thread;
}

async function threadDetail(deps: HttpDeps, threadId: string): Promise<AdminThreadDetailDto> {
  const [context, transcript, revisions, pack, forks] = await Promise.all([
    deps.turns.loadContext(threadId),
    deps.admin.threads.transcriptSize(threadId),
    deps.admin.summaries.listRevisions(threadId),
    contextPreview(deps, threadId, { systemPromptText: true }),
    deps.fork.forks.listForks(threadId),
  ]);
  if (!context) throw new AppError('NOT_FOUND', 'No such thread.');
  const { thread } = context;
  const parentId = thread.forkedFrom?.threadId ?? null;
  const parent = parentId ? await deps.threads.findThread(parentId, null) : null;
  const decision = foldDecisionFor(context, deps.settings);
  return {
    thread: { ...toThreadDto(thread), ownerId: thread.ownerId },
    context: {
      summaryText: thread.summary?.text ?? '',
      summaryTokens: thread.summary?.tokens ?? 0,
      revision: thread.summary?.revision ?? 0,
      coveredThroughSeq: thread.summary?.coveredThroughSeq ?? 0,
      contextStartSeq: thread.contextStartSeq,
      memoryMode: thread.memoryMode,
      version: thread.version,
      windowEntries: context.window.length,
      windowTokens: context.window.reduce((sum, entry) => sum + entry.tokens, 0),
      pinnedEntries: context.pinned.length,
      foldPending: decision.fold,
      foldReasons: decision.reasons,
      lastFoldAt: thread.lastFoldAt?.toISOString() ?? null,
      lastFoldError: thread.lastFoldError,
      settings: thread.settings,
    },
    pack,
    transcript,
    revisions: revisions.map(toRevisionInfoDto),
    lineage: {
      parent:
        parent && thread.forkedFrom ? { threadId: parent.id, title: parent.title, seq: thread.forkedFrom.seq } : null,
      forks: forks.map((fork) => ({
        threadId: fork.threadId,
        title: fork.title,
        seq: fork.seq,
        createdAt: fork.createdAt.toISOString(),
      })),
    },
  };
}

/** GET /admin/threads/:id/messages/:messageId/context */
async function messageContextRoute(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const { id, messageId } = parseOrThrow(messageIdParams, request.params, 'path');
  const thread = await anyThread(deps, id);
  const body: MessageContextDto = withLimits(
    await deps.messageContext.forMessage(thread.id, messageId, { systemPromptText: true }),
    deps.settings,
  );
  await deps.admin.audit.record({
    actor: adminOf(response).actor,
    action: 'message-context.viewed',
    threadId: thread.id,
    details: { messageId, ownerId: thread.ownerId },
  });
  response.json(body);
}

/** GET /admin/threads */
async function listThreadsRoute(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const query = parseOrThrow(adminThreadsQuery, request.query, 'query');
  const page = await deps.admin.threads.listThreads({
    limit: query.limit,
    sort: query.sort,
    policy: deps.admin.foldLagPolicy,
    ...(query.query ? { query: query.query } : {}),
    ...(query.cursor ? { cursor: query.cursor } : {}),
  });
  const body: AdminThreadPageDto = { threads: page.items.map(toAdminThreadDto), nextCursor: page.nextCursor };
  response.json(body);
}

/** GET /admin/threads/:id */
async function threadDetailRoute(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const thread = await anyThread(deps, request.params.id);
  const detail = await threadDetail(deps, thread.id);
  // The detail carries the thread's settings and what its next model call would get: a read worth auditing.
  await deps.admin.audit.record({
    actor: adminOf(response).actor,
    action: 'thread.viewed',
    threadId: thread.id,
    details: { ownerId: thread.ownerId },
  });
  response.json(detail);
}

/** GET /admin/threads/:id/summaries */
async function summaryRevisionsRoute(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const thread = await anyThread(deps, request.params.id);
  const query = parseOrThrow(summaryRevisionsQuery, request.query, 'query');
  const all = await deps.admin.summaries.listRevisions(thread.id);
  const shown = all.slice(-query.limit);
  const previous = all.length > shown.length ? (all[all.length - shown.length - 1] ?? null) : null;
  const body: SummaryRevisionListDto = {
    revisions: toRevisionDtos(shown, previous),
    hasMoreBefore: all.length > shown.length,
  };
  response.json(body);
}

/** POST /admin/threads/:id/summarize */
async function summarizeRoute(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const thread = await anyThread(deps, request.params.id);
  const jobId = await onQueue(() => deps.admin.jobs.enqueueFold(thread.id, 'admin', true));
  await deps.admin.audit.record({
    actor: adminOf(response).actor,
    action: 'summary.fold-requested',
    threadId: thread.id,
    details: { jobId },
  });
  const body: SummaryJobAcceptedDto = { jobId };
  response.status(202).json(body);
}

/** POST /admin/threads/:id/rebuild-summary */
async function rebuildSummaryRoute(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const thread = await anyThread(deps, request.params.id);
  if (!thread.summary || thread.summary.revision === 0)
    throw new AppError('CONFLICT', 'The thread has no summary yet: nothing to rebuild.');
  const actor = adminOf(response).actor;
  const jobId = await onQueue(() => deps.admin.jobs.enqueueRebuild({ threadId: thread.id, actorId: actor }));
  await deps.admin.audit.record({
    actor,
    action: 'summary.rebuild-requested',
    threadId: thread.id,
    details: { jobId },
  });
  const body: SummaryJobAcceptedDto = { jobId };
  response.status(202).json(body);
}

/** PUT /admin/threads/:id/summary */
async function correctSummaryRoute(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const thread = await anyThread(deps, request.params.id);
  const body = parseOrThrow(correctSummaryBody, request.body, 'summary');
  const actor = adminOf(response).actor;
  const corrected: SummaryCorrectedDto = await correctSummary(
    {
      threadId: thread.id,
      text: body.text,
      actorId: actor,
      ...(body.expectedRevision !== undefined ? { expectedRevision: body.expectedRevision } : {}),
    },
    { turns: deps.turns, summaries: deps.admin.summaries, events: deps.events, settings: deps.settings },
  );
  await deps.admin.audit.record({ actor, action: 'summary.corrected', threadId: thread.id, details: { ...corrected } });
  response.json(corrected);
}

/**
 * PATCH /admin/threads/:id/settings: any thread's memory settings, the summary prompt included (the user route lets
 * admins do it with an admin JWT; this one serves the admin console's session).
 */
async function threadSettingsRoute(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const thread = await anyThread(deps, request.params.id);
  const patch = patchOf(parseOrThrow(threadSettingsBody, request.body ?? {}, 'settings'));
  const actor = adminOf(response).actor;
  const view = await updateThreadSettings(
    { actor: { userId: actor, admin: true }, threadId: thread.id, patch },
    deps.memory,
  );
  await deps.admin.audit.record({
    actor,
    action: 'thread.settings-changed',
    threadId: thread.id,
    details: { ...patch },
  });
  response.json(settingsDto(view));
}

/** The admin's view of every thread: list, detail, summary revisions, and the summary actions (audited). */
export function adminThreadRoutes(deps: HttpDeps): Router {
  const router = Router();
  router.get('/admin/threads/:id/messages/:messageId/context', (request, response) =>
    messageContextRoute(deps, request, response),
  );
  router.get('/admin/threads', (request, response) => listThreadsRoute(deps, request, response));
  router.get('/admin/threads/:id', (request, response) => threadDetailRoute(deps, request, response));
  router.get('/admin/threads/:id/summaries', (request, response) => summaryRevisionsRoute(deps, request, response));
  router.post('/admin/threads/:id/summarize', (request, response) => summarizeRoute(deps, request, response));
  router.post('/admin/threads/:id/rebuild-summary', (request, response) =>
    rebuildSummaryRoute(deps, request, response),
  );
  router.put('/admin/threads/:id/summary', (request, response) => correctSummaryRoute(deps, request, response));
  router.patch('/admin/threads/:id/settings', (request, response) => threadSettingsRoute(deps, request, response));

  return router;
}
