import { Router } from 'express';
import { AppError } from '../../core/errors';
import { packBudget } from '../../core/context-settings';
import { buildTurnPack } from '../../core/turn/stream-answer';
import { threadForActor } from '../../core/memory/thread-for-actor';
import type { ContextPackDto, MessageContextDto } from '../../shared/api';
import { messageIdParams, parseOrThrow } from '../request-schemas';
import { memoryActorOf } from './memory-routes';
import { principalOf } from '../authenticate';
import type { HttpDeps } from '../http-deps';
import { ownThread } from './thread-routes';

/** What the next model call of a thread would get, entry by entry. */
export async function contextPreview(deps: Pick<HttpDeps, 'turns' | 'settings'> & Partial<Pick<HttpDeps, 'toolDefinitions'>>, threadId: string): Promise<ContextPackDto> {
  const context = await deps.turns.loadContext(threadId, { recall: true });
  if (!context) throw new AppError('NOT_FOUND', 'No such thread.');
  const { settings } = deps;
  // As the next chat call builds it: old long tool arguments shortened, the offered tool schemas taken off the budget.
  const { pack, toolSchemaTokens } = buildTurnPack(context, settings, deps.toolDefinitions?.() ?? []);
  const summary = context.thread.summary;
  const titles = new Map((context.recalledElsewhere ?? []).flatMap((message) => (message.thread ? [[message.thread.id, message.thread.title] as const] : [])));
  return {
    messages: pack.messages.map((message) => ({
      role: message.role, content: message.content, tokens: message.tokens,
      ...(message.toolCalls ? { toolCalls: message.toolCalls } : {}),
      ...(message.toolCallId ? { toolCallId: message.toolCallId } : {}),
      ...(message.seq !== undefined ? { seq: message.seq } : {}),
    })),
    tokens: pack.tokens,
    budget: packBudget(settings) - toolSchemaTokens,
    omitted: pack.omitted,
    summary: summary && summary.revision > 0 ? { text: summary.text, tokens: summary.tokens, revision: summary.revision, coveredThroughSeq: summary.coveredThroughSeq } : null,
    window: {
      fromSeq: context.window[0]?.seq ?? null,
      throughSeq: context.window.at(-1)?.seq ?? null,
      entries: context.window.length,
      tokens: context.window.reduce((sum, entry) => sum + entry.tokens, 0),
    },
    pinnedSeqs: context.pinned.map((entry) => entry.seq),
    recalledSeqs: pack.manifest.recalledSeqs,
    recalledElsewhere: pack.manifest.recalledElsewhere.map((ref) => ({ ...ref, title: titles.get(ref.threadId) ?? null })),
  };
}

export function contextRoutes(deps: HttpDeps): Router {
  const router = Router();
  // What the model was given for one answer: the owner's, or any thread's for an admin.
  router.get('/threads/:id/messages/:messageId/context', async (request, response) => {
    const { id, messageId } = parseOrThrow(messageIdParams, request.params, 'path');
    const thread = await threadForActor(deps, id, memoryActorOf(response));
    const body: MessageContextDto = await deps.messageContext.forMessage(thread.id, messageId);
    response.json(body);
  });
  router.get('/threads/:id/context', async (request, response) => {
    const thread = await ownThread(deps, request.params.id, principalOf(response).userId);
    response.json(await contextPreview(deps, thread.id));
  });
  return router;
}
