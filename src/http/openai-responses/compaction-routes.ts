import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Thread } from '../../core/domain/types';
import { AppError } from '../../core/errors/app-error';
import { compactThread, spendForCompaction } from '../../core/facade/compact-thread';
import { findResponse } from '../../core/facade/find-response';
import { candidatesOf } from '../../core/facade/start-chat-completion';
import type { HttpDeps } from '../http-deps';
import type { FacadeHttpDeps } from '../openai-facade/facade-deps';
import { facadePrincipal, type FacadePrincipalDeps } from '../openai-facade/facade-principal';
import { conversationOf, THREAD_ID_HEADER } from '../openai-facade/facade-request';
import { compactionItem, compactionOfToken, type Compaction } from './compaction-token';
import { readResponseRequest, type ReadRequest } from './read-response-request';
import { openResponseStream } from './response-answer';
import { threadOfConversationId, turnOfResponseId } from './response-ids';
import { responseObject, type ResponseUsage } from './response-object';

interface RouteContext {
  deps: HttpDeps;
  facade: FacadeHttpDeps;
  principalDeps: FacadePrincipalDeps;
}

/** Rows at a thread's end read for the user messages a compaction by previous_response_id echoes. */
const TAIL_ROWS_READ = 40;

/** A compaction item this server did not give this user, or whose conversation is gone: 400 naming `input`. */
export function invalidCompaction(field: string): AppError {
  return new AppError(
    'VALIDATION',
    `${field}: this compaction item does not stand for a conversation of yours here (tampered with, another user's, or its conversation was deleted).`,
    { details: { field: 'input' } },
  );
}

/** What the request's last compaction item stands for, checked for this user (400 when it is not theirs); null: none. */
export function compactionOfInput(read: ReadRequest, userId: string, facade: FacadeHttpDeps): Compaction | null {
  const found = read.input.compaction;
  if (!found) return null;
  const compaction = compactionOfToken(facade.compactionKey, userId, found.token);
  if (!compaction) throw invalidCompaction(found.field);
  return compaction;
}

/** Whether a thread still holds what a compaction item names (its revision and seq are not ahead of it). */
export function holdsCompaction(thread: Thread, compaction: Compaction): boolean {
  return compaction.revision <= (thread.summary?.revision ?? 0) && compaction.atSeq <= thread.lastSeq;
}

function previousResponseNotFound(id: string): AppError {
  return new AppError('VALIDATION', `Previous response with id '${id}' not found.`, {
    details: { field: 'previous_response_id', openaiCode: 'previous_response_not_found' },
  });
}

/** The thread a stateless history is (the branch of its conversation holding most of it); 400 when none holds any. */
async function threadOfHistory(request: Request, read: ReadRequest, userId: string, context: RouteContext) {
  const { deps, facade } = context;
  const { messages } = read.input;
  const notHeld = new AppError(
    'VALIDATION',
    'input: this history is not a conversation this server holds; send it with POST /v1/responses first, or name it with previous_response_id.',
    { details: { field: 'input' } },
  );
  if (messages.length === 0) throw notHeld;
  const firstUser = messages.find((each) => each.role === 'user')?.content ?? '';
  const conversation = conversationOf(request, facade.threadHeaders, firstUser);
  const candidates = await candidatesOf(
    { userId, conversation, messages },
    { conversations: facade.conversations, threads: deps.threads, maxReadMessages: facade.maxReadMessages },
  );
  const best = candidates.reduce<(typeof candidates)[number] | null>(
    (chosen, each) => (each.plan.matched > (chosen?.plan.matched ?? 0) ? each : chosen),
    null,
  );
  if (!best) throw notHeld;
  return best.thread;
}

/**
 * The thread a compaction request names, as POST /v1/responses resolves it: a compaction item in its input (that
 * item's thread), `previous_response_id` (that response's thread), `conversation`, else the stateless history's branch.
 */
async function threadToCompact(
  request: Request,
  read: ReadRequest,
  userId: string,
  context: RouteContext,
): Promise<Thread> {
  const { deps, facade } = context;
  const { body } = read;
  const compaction = compactionOfInput(read, userId, facade);
  if (compaction) {
    const thread = await deps.threads.findThread(compaction.threadId, userId);
    if (!thread || !holdsCompaction(thread, compaction))
      throw invalidCompaction(read.input.compaction?.field ?? 'input');
    return thread;
  }
  if (body.previous_response_id) {
    const turnId = turnOfResponseId(facade.responseIdKey, userId, body.previous_response_id);
    const found = turnId ? await findResponse({ userId, turnId }, deps) : null;
    if (!found) throw previousResponseNotFound(body.previous_response_id);
    return found.thread;
  }
  if (body.conversation) {
    const id = typeof body.conversation === 'string' ? body.conversation : body.conversation.id;
    const threadId = threadOfConversationId(id);
    const thread = threadId ? await deps.threads.findThread(threadId, userId) : null;
    if (!thread)
      throw new AppError('NOT_FOUND', `Conversation with id '${id}' not found.`, {
        details: { field: 'conversation' },
      });
    return thread;
  }
  return threadOfHistory(request, read, userId, context);
}

function usageOf(tokens: { tokensIn: number; tokensOut: number }): ResponseUsage {
  return {
    input_tokens: tokens.tokensIn,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: tokens.tokensOut,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: tokens.tokensIn + tokens.tokensOut,
  };
}

/**
 * Spends what a compaction costs (the send limit and a spend hold, before anything is read), resolves the thread and
 * folds it now (bounded by TURN_TIMEOUT_MS): its compaction item and the fold's usage.
 */
async function compactRequest(request: Request, read: ReadRequest, userId: string, context: RouteContext) {
  const { deps, facade } = context;
  const spent = await spendForCompaction(userId, { sendLimiter: deps.sendLimiter, spend: deps.spend });
  try {
    const thread = await threadToCompact(request, read, userId, context);
    const compacted = await compactThread(
      { userId, threadId: thread.id },
      {
        threads: deps.threads,
        foldNow: (threadId, signal) => facade.fold(threadId, { force: true, signal }),
        timeoutMs: deps.limits.turnTimeoutMs,
      },
    );
    const item = compactionItem(facade.compactionKey, userId, {
      threadId: thread.id,
      revision: compacted.revision,
      atSeq: compacted.atSeq,
    });
    return { thread: compacted.thread, item, usage: usageOf(compacted.usage) };
  } finally {
    await spent.release();
  }
}

/** A user message as an output item of a compaction. */
const userItem = (text: string) => ({
  type: 'message' as const,
  role: 'user' as const,
  content: [{ type: 'input_text' as const, text }],
});

/** The user messages a compaction echoes: the input's after its last compaction item, else the thread's latest. */
async function keptUserMessages(read: ReadRequest, thread: Thread, context: RouteContext): Promise<string[]> {
  const sent = read.input.messages.flatMap((message) => (message.role === 'user' ? [message.content] : []));
  if (sent.length > 0 || read.input.compaction) return sent;
  const rows = await context.facade.conversations.history.readRows({
    threadId: thread.id,
    fromSeq: Math.max(1, thread.lastSeq - TAIL_ROWS_READ + 1),
    throughSeq: thread.lastSeq,
    limit: TAIL_ROWS_READ,
  });
  return rows.flatMap(({ message }) =>
    message.role === 'user' && !message.deleted && !message.superseded ? [message.content] : [],
  );
}

/**
 * POST /v1/responses/compact (what the Agents SDK's compaction session calls): folds the conversation now and
 * answers as OpenAI does, `{id, object: "response.compaction", created_at, output, usage}`, the output being the user
 * messages kept and one `compaction` item whose token stands for the thread's summary from then on.
 */
export async function compactConversation(request: Request, response: Response, context: RouteContext): Promise<void> {
  const raw = request.body as { user?: unknown } | undefined;
  const principal = await facadePrincipal(request, context.principalDeps, raw?.user);
  const read = readResponseRequest({ input: [], ...(request.body as object | undefined) }, context.facade);
  const { thread, item, usage } = await compactRequest(request, read, principal.userId, context);
  const kept = await keptUserMessages(read, thread, context);
  response.setHeader(THREAD_ID_HEADER, thread.id);
  response.json({
    id: `resp_${randomBytes(16).toString('hex')}`,
    object: 'response.compaction',
    created_at: Math.floor(Date.now() / 1000),
    output: [...kept.map(userItem), item],
    usage,
  });
}

/**
 * POST /v1/responses whose last input item is `compaction_trigger` (Codex CLI's remote compaction): the conversation
 * is folded now and the answer is a Response with exactly one `compaction` output item and no model answer; streamed
 * as `response.created`, `response.in_progress`, the item's `output_item.added` and `.done`, `response.completed`.
 */
export async function answerCompactionTrigger(
  request: Request,
  response: Response,
  input: { read: ReadRequest; userId: string },
  context: RouteContext,
): Promise<void> {
  const { read, userId } = input;
  const { thread, item, usage } = await compactRequest(request, read, userId, context);
  response.setHeader(THREAD_ID_HEADER, thread.id);
  const frame = {
    id: `resp_${randomBytes(16).toString('hex')}`,
    model: read.body.model,
    createdAt: Math.floor(Date.now() / 1000),
    instructions: read.body.instructions ?? null,
    previousResponseId: read.body.previous_response_id ?? null,
    store: false,
    metadata: read.body.metadata ?? {},
    conversation: null,
    tools: read.body.tools ?? [],
  };
  const completed = responseObject(frame, { status: 'completed', output: [item], usage });
  if (!read.body.stream) {
    response.json(completed);
    return;
  }
  const send = openResponseStream(response);
  const pending = responseObject(frame, { status: 'in_progress', output: [], usage: null });
  send('response.created', { response: pending });
  send('response.in_progress', { response: pending });
  send('response.output_item.added', { output_index: 0, item });
  send('response.output_item.done', { output_index: 0, item });
  send('response.completed', { response: completed });
  response.end();
}
