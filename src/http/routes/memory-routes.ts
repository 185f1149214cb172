import { Router, type Request, type Response } from 'express';
import { toMessageDto, toThreadDto } from '../../core/dto/api-dto';
import {
  forgetMessage,
  getThreadSettings,
  pinMessage,
  regenerateAnswer,
  resetContext,
  undoContextReset,
  unpinMessage,
  updateThreadSettings,
  type ContextResetOutcome,
  type MemoryActor,
  type PinOutcome,
  type ThreadSettingsPatch,
  type ThreadSettingsView,
} from '../../core/memory';
import type {
  ContextResetResponseDto,
  ForgetResponseDto,
  PinResponseDto,
  RegenerateResponseDto,
  ThreadMemorySettingsDto,
} from '../../shared/api';
import { principalOf } from '../authenticate';
import type { HttpDeps } from '../http-deps';
import {
  forgetMessageQuery,
  messageIdParams,
  parseOrThrow,
  threadIdParams,
  threadSettingsBody,
} from '../request-schemas';
import { auditAdminOverride } from './audit-admin-override';
import { waitForTurnEnd } from '../turn-ended';
import { turnResult } from './message-routes';

/** The caller as the memory controls see it: admins (a JWT with role admin) may act on any thread. */
export function memoryActorOf(response: Response): MemoryActor {
  const principal = principalOf(response);
  return { userId: principal.userId, admin: principal.role === 'admin' };
}

function pinDto(outcome: PinOutcome): PinResponseDto {
  return {
    messages: outcome.messages.map(toMessageDto),
    pinnedTokens: outcome.pinnedTokens,
    pinnedMaxTokens: outcome.pinnedMaxTokens,
  };
}

/** The settings view as its DTO (also answered by the admin settings route). */
export function settingsDto(view: ThreadSettingsView): ThreadMemorySettingsDto {
  return { ...view, thread: toThreadDto(view.thread) };
}

function resetDto(outcome: ContextResetOutcome): ContextResetResponseDto {
  return { seq: outcome.seq, thread: toThreadDto(outcome.thread) };
}

/** Strips absent keys, so a patch never carries `undefined` (exactOptionalPropertyTypes). */
export function patchOf(body: {
  trigger?: string | null | undefined;
  keep?: string | null | undefined;
  memory?: 'summary' | 'window-only' | undefined;
  summaryPrompt?: string | null | undefined;
  recallTokens?: number | null | undefined;
  recallScope?: 'thread' | 'user' | null | undefined;
}): ThreadSettingsPatch {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined)) as ThreadSettingsPatch;
}

/** POST /threads/:id/messages/:messageId/pin */
async function pinRoute(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const { id, messageId } = parseOrThrow(messageIdParams, request.params, 'path');
  const outcome = await pinMessage({ actor: memoryActorOf(response), threadId: id, messageId }, deps.memory);
  await auditAdminOverride(deps, response, { threadId: id, action: 'message.pinned', details: { messageId } });
  response.json(pinDto(outcome));
}

/** DELETE /threads/:id/messages/:messageId/pin */
async function unpinRoute(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const { id, messageId } = parseOrThrow(messageIdParams, request.params, 'path');
  const outcome = await unpinMessage({ actor: memoryActorOf(response), threadId: id, messageId }, deps.memory);
  await auditAdminOverride(deps, response, { threadId: id, action: 'message.unpinned', details: { messageId } });
  response.json(pinDto(outcome));
}

/** DELETE /threads/:id/messages/:messageId */
async function forgetRoute(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const { id, messageId } = parseOrThrow(messageIdParams, request.params, 'path');
  const { only } = parseOrThrow(forgetMessageQuery, request.query, 'query');
  const outcome = await forgetMessage({ actor: memoryActorOf(response), threadId: id, messageId, only }, deps.memory);
  await auditAdminOverride(deps, response, {
    threadId: id,
    ownerId: outcome.thread.ownerId,
    action: 'message.forgotten',
    details: { messageId, only, forgotten: outcome.messages.length },
  });
  const body: ForgetResponseDto = {
    messages: outcome.messages.map(toMessageDto),
    memoryRebuilding: outcome.memoryRebuilding,
    thread: toThreadDto(outcome.thread),
    copies: outcome.copies.map((copy) => ({
      threadId: copy.threadId,
      title: copy.title,
      messageId: copy.messageId,
      seq: copy.seq,
    })),
  };
  response.json(body);
}

/** GET /threads/:id/settings */
async function getSettingsRoute(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const { id } = parseOrThrow(threadIdParams, request.params, 'path');
  const view = await getThreadSettings({ actor: memoryActorOf(response), threadId: id }, deps.memory);
  await auditAdminOverride(deps, response, {
    threadId: id,
    ownerId: view.thread.ownerId,
    action: 'thread.settings-viewed',
  });
  response.json(settingsDto(view));
}

/** PATCH /threads/:id/settings */
async function patchSettingsRoute(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const { id } = parseOrThrow(threadIdParams, request.params, 'path');
  const body = parseOrThrow(threadSettingsBody, request.body ?? {}, 'settings');
  const patch = patchOf(body);
  const view = await updateThreadSettings({ actor: memoryActorOf(response), threadId: id, patch }, deps.memory);
  await auditAdminOverride(deps, response, {
    threadId: id,
    ownerId: view.thread.ownerId,
    action: 'thread.settings-changed',
    details: { ...patch },
  });
  response.json(settingsDto(view));
}

/** POST /threads/:id/context-reset */
async function resetContextRoute(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const { id } = parseOrThrow(threadIdParams, request.params, 'path');
  const outcome = await resetContext({ actor: memoryActorOf(response), threadId: id }, deps.memory);
  await auditAdminOverride(deps, response, {
    threadId: id,
    ownerId: outcome.thread.ownerId,
    action: 'context.reset',
    details: { seq: outcome.seq },
  });
  response.status(201).json(resetDto(outcome));
}

/** DELETE /threads/:id/context-reset */
async function undoResetRoute(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const { id } = parseOrThrow(threadIdParams, request.params, 'path');
  const outcome = await undoContextReset({ actor: memoryActorOf(response), threadId: id }, deps.memory);
  await auditAdminOverride(deps, response, {
    threadId: id,
    ownerId: outcome.thread.ownerId,
    action: 'context.reset-undone',
    details: { seq: outcome.seq },
  });
  response.json(resetDto(outcome));
}

/** POST /threads/:id/regenerate */
async function regenerateRoute(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const { id } = parseOrThrow(threadIdParams, request.params, 'path');
  const outcome = await regenerateAnswer({ actor: memoryActorOf(response), threadId: id }, deps.memory);
  await auditAdminOverride(deps, response, {
    threadId: id,
    action: 'answer.regenerated',
    details: { turnId: outcome.turn.id, userMessageId: outcome.userMessage.id },
  });
  // The new turn's wait is a sent message's: kick the runner, wait for its end or the client going away.
  await waitForTurnEnd(deps, { turn: outcome.turn, duplicate: false }, request, response);
  const result = await turnResult(deps, outcome.turn.id, outcome.userMessage.id, id);
  const body: RegenerateResponseDto = { ...result, superseded: outcome.superseded.map(toMessageDto) };
  response.status(201).json(body);
}

/**
 * Memory controls (issue 10). Each route validates, calls one core use case and maps the result; the use cases emit
 * the live-state events (message-updated, thread-updated, context-reset) on the thread event bus.
 */
export function memoryRoutes(deps: HttpDeps): Router {
  const router = Router();
  router.post('/threads/:id/messages/:messageId/pin', (request, response) => pinRoute(deps, request, response));
  router.delete('/threads/:id/messages/:messageId/pin', (request, response) => unpinRoute(deps, request, response));
  router.delete('/threads/:id/messages/:messageId', (request, response) => forgetRoute(deps, request, response));
  router.get('/threads/:id/settings', (request, response) => getSettingsRoute(deps, request, response));
  router.patch('/threads/:id/settings', (request, response) => patchSettingsRoute(deps, request, response));
  router.post('/threads/:id/context-reset', (request, response) => resetContextRoute(deps, request, response));
  router.delete('/threads/:id/context-reset', (request, response) => undoResetRoute(deps, request, response));
  router.post('/threads/:id/regenerate', (request, response) => regenerateRoute(deps, request, response));

  return router;
}
