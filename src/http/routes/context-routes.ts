import { createHash } from 'node:crypto';
import { Router } from 'express';
import { AppError } from '../../core/errors/app-error';
import { packBudget } from '../../core/thread-context/context-settings';
import { buildTurnPack } from '../../core/turn/stream-answer';
import { spendOrRefuse } from '../../core/turn/spend-or-refuse';
import { holdsCondensedResult, offeredDefinitions } from '../../core/tools';
import { threadForActor } from '../../core/memory/thread-for-actor';
import type { ContextPack, PackTokenParts } from '../../core/context/build-context-pack';
import type { BudgetExplanationDto, ContextPackDto, MessageContextDto, PackEntryDto } from '../../shared/api';
import { messageIdParams, parseOrThrow } from '../request-schemas';
import { memoryActorOf } from './memory-routes';
import { principalOf } from '../authenticate';
import type { HttpDeps } from '../http-deps';
import { ownThread } from './thread-routes';
import { auditAdminOverride } from './audit-admin-override';

/**
 * The pack's entries as DTOs, the leading system message split in two: the configured system prompt (its text only
 * with `systemPromptText`, for admins; its hash and tokens for everyone) and what follows it (the summary), so an
 * owner still sees their summary without the operator's instructions.
 */
function packEntries(pack: ContextPack, systemPrefix: string, systemPromptText: boolean): PackEntryDto[] {
  const entries: PackEntryDto[] = pack.messages.map((message) => ({
    role: message.role,
    content: message.content,
    tokens: message.tokens,
    ...(message.toolCalls ? { toolCalls: message.toolCalls } : {}),
    ...(message.toolCallId ? { toolCallId: message.toolCallId } : {}),
    ...(message.seq !== undefined ? { seq: message.seq } : {}),
  }));
  const [leading, ...rest] = entries;
  if (!leading || leading.role !== 'system' || leading.seq !== undefined || !leading.content.startsWith(systemPrefix))
    return entries;
  const promptTokens = Math.min(pack.manifest.parts.systemPrefix, leading.tokens);
  const prompt: PackEntryDto = {
    role: 'system',
    content: systemPromptText ? systemPrefix : '',
    tokens: promptTokens,
    systemPrompt: { hash: createHash('sha256').update(systemPrefix).digest('hex'), hidden: !systemPromptText },
  };
  const remainder = leading.content.slice(systemPrefix.length).replace(/^\s+/, '');
  const after: PackEntryDto[] =
    remainder === '' ? [] : [{ role: 'system', content: remainder, tokens: leading.tokens - promptTokens }];
  return [prompt, ...after, ...rest];
}

/**
 * What the next model call of a thread would get, entry by entry. The system prompt's text is there only with
 * `systemPromptText` (admins); thread owners get its hash and token count.
 */
export async function contextPreview(
  deps: Pick<HttpDeps, 'turns' | 'settings'> & Partial<Pick<HttpDeps, 'toolDefinitions'>>,
  threadId: string,
  options: { systemPromptText: boolean },
): Promise<ContextPackDto> {
  const context = await deps.turns.loadContext(threadId, { recall: true });
  if (!context) throw new AppError('NOT_FOUND', 'No such thread.');
  const { settings } = deps;
  // As the next chat call builds it: old long tool arguments shortened, the offered tool schemas taken off the budget.
  const offered = offeredDefinitions(
    deps.toolDefinitions?.() ?? [],
    context.thread.settings.recallScope ?? settings.recallScope,
    holdsCondensedResult(context),
  );
  const { pack, toolSchemaTokens } = buildTurnPack(context, settings, offered);
  const summary = context.thread.summary;
  const titles = new Map(
    (context.recalledElsewhere ?? []).flatMap((message) =>
      message.thread ? [[message.thread.id, message.thread.title] as const] : [],
    ),
  );
  return {
    messages: packEntries(pack, settings.systemPrefix, options.systemPromptText),
    tokens: pack.tokens,
    budget: packBudget(settings) - toolSchemaTokens,
    explanation: budgetExplanation(settings, pack.manifest.parts, toolSchemaTokens),
    omitted: pack.omitted,
    summary:
      summary && summary.revision > 0
        ? {
            text: summary.text,
            tokens: summary.tokens,
            revision: summary.revision,
            coveredThroughSeq: summary.coveredThroughSeq,
          }
        : null,
    window: {
      fromSeq: context.window[0]?.seq ?? null,
      throughSeq: context.window.at(-1)?.seq ?? null,
      entries: context.window.length,
      tokens: context.window.reduce((sum, entry) => sum + entry.tokens, 0),
    },
    pinnedSeqs: context.pinned.map((entry) => entry.seq),
    recalledSeqs: pack.manifest.recalledSeqs,
    recalledElsewhere: pack.manifest.recalledElsewhere.map((ref) => ({
      ...ref,
      title: titles.get(ref.threadId) ?? null,
    })),
  };
}

/** What a call was given, with the deployment's window, reserve for the answer and budget to read its parts against. */
export function withLimits(
  seen: Omit<MessageContextDto, 'limits'>,
  settings: Pick<HttpDeps['settings'], 'profile' | 'budget'>,
): MessageContextDto {
  return {
    ...seen,
    limits: {
      contextWindow: settings.profile.maxInputTokens,
      reservedOutputTokens: settings.profile.reservedOutputTokens,
      budget: settings.budget,
    },
  };
}

/** How the window, the reserve, the budget, the tool definitions and the pack's parts relate. */
function budgetExplanation(
  settings: HttpDeps['settings'],
  parts: PackTokenParts,
  toolSchemas: number,
): BudgetExplanationDto {
  return {
    contextWindow: settings.profile.maxInputTokens,
    reservedOutputTokens: settings.profile.reservedOutputTokens,
    budget: settings.budget,
    correctedBudget: packBudget(settings),
    toolSchemas,
    parts: {
      systemPrefix: parts.systemPrefix,
      savedMemories: parts.savedMemories ?? 0,
      summary: parts.summary,
      pinned: parts.pinned,
      window: parts.window,
      // Recall notes held since the last fold are recall too.
      recall: parts.recall + (parts.heldRecall ?? 0),
      notes: parts.notes,
      priming: parts.priming,
    },
  };
}

export function contextRoutes(deps: HttpDeps): Router {
  const router = Router();
  // What the model was given for one answer: the owner's, or any thread's for an admin.
  router.get('/threads/:id/messages/:messageId/context', async (request, response) => {
    const { id, messageId } = parseOrThrow(messageIdParams, request.params, 'path');
    const actor = memoryActorOf(response);
    const thread = await threadForActor(deps, id, actor);
    // The system prompt's text is the operator's: admins see it, owners its hash and size.
    const body = withLimits(
      await deps.messageContext.forMessage(thread.id, messageId, { systemPromptText: actor.admin }),
      deps.settings,
    );
    // An admin reading another user's prompt: audited like the admin console's read.
    await auditAdminOverride(deps, response, {
      threadId: thread.id,
      ownerId: thread.ownerId,
      action: 'message-context.viewed',
      details: { messageId },
    });
    response.json(body);
  });
  router.get('/threads/:id/context', async (request, response) => {
    const principal = principalOf(response);
    const thread = await ownThread(deps, request.params.id, principal.userId);
    // Its recall searches every thread of the user: a search, counted against SEARCH_PER_MINUTE.
    if ((thread.settings.recallScope ?? deps.settings.recallScope) === 'user')
      await spendOrRefuse(deps.searchLimiter, principal.userId, 'searches');
    response.json(await contextPreview(deps, thread.id, { systemPromptText: principal.role === 'admin' }));
  });
  return router;
}
