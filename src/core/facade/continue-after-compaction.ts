import { clientToolsOf } from '../context/client-instructions';
import { AppError } from '../errors';
import type { ClientMessage } from '../ports';
import type { OpenAIClientSettings } from '../context/types';
import { clientViewOf } from './client-view';
import { chainThrough, matchHistory } from './match-history';
import {
  carryOut,
  DEFAULT_MAX_READ_MESSAGES,
  spendFirst,
  type ChatCompletionDeps,
  type StartedCompletion,
} from './start-chat-completion';

/** Rows before a compaction's point read to know the item the history after it follows. */
const ROWS_BEFORE_READ = 40;

export interface ContinueAfterCompactionRequest {
  userId: string;
  /** What the compaction item stands for (its token checked by the caller): the thread through `atSeq`. */
  compaction: { threadId: string; revision: number; atSeq: number };
  /** The items after the compaction item, as the core reads them. */
  messages: ClientMessage[];
  client: OpenAIClientSettings;
}

/**
 * A history that starts at a compaction item: the compaction stands for its thread through the seq it was made at
 * (the summary and window as they now stand: a later fold or a forget's rebuild may have replaced the revision it
 * named), and the items after it are compared with the thread's from there on, as a stateless history is compared
 * from the start: a new user message is a turn on the thread, a changed one an edit on a fork at that point (never a
 * fork from the thread's first message). The limit is spent first. Null when the thread is not this user's any more
 * (deleted, erased) or does not hold what the item names (its revision or seq lie ahead of it).
 */
export async function continueAfterCompaction(
  request: ContinueAfterCompactionRequest,
  unspent: ChatCompletionDeps,
): Promise<StartedCompletion | null> {
  const deps = await spendFirst(request, unspent);
  const { compaction } = request;
  const thread = await deps.threads.findThread(compaction.threadId, request.userId);
  if (!thread) return null;
  if (compaction.revision > (thread.summary?.revision ?? 0) || compaction.atSeq > thread.lastSeq) return null;
  const rows =
    compaction.atSeq > 0
      ? await deps.conversations.history.readRows({
          threadId: thread.id,
          fromSeq: Math.max(1, compaction.atSeq - ROWS_BEFORE_READ + 1),
          throughSeq: compaction.atSeq,
          limit: ROWS_BEFORE_READ,
        })
      : [];
  const clientTools = new Set(clientToolsOf(thread).map((tool) => tool.function.name));
  const clientResults = new Set(
    rows.flatMap((row) =>
      row.message.role === 'tool' && row.prefixHash !== null && row.message.toolCallId !== null
        ? [row.message.toolCallId]
        : [],
    ),
  );
  const view = clientViewOf(
    rows.map((row) => row.message),
    { isClientCall: (name) => clientTools.has(name), clientResults },
  );
  const previous = view.at(-1) ?? null;
  const maxRead = deps.maxReadMessages ?? DEFAULT_MAX_READ_MESSAGES;
  const plan = await matchHistory(
    {
      thread,
      client: request.messages,
      budget: { remaining: maxRead },
      start: {
        index: 0,
        fromSeq: compaction.atSeq + 1,
        chain: previous ? chainThrough(previous, rows) : null,
        previous,
      },
    },
    deps.conversations.history,
  );
  if (!plan)
    throw new AppError(
      'VALIDATION',
      `messages: comparing the items after the compaction item with the conversation takes reading more than ${maxRead} of its messages (FACADE_MAX_READ_MESSAGES); compact again.`,
      { details: { field: 'messages' } },
    );
  // Its place in the thread, not in the request (the id of a new message repeats only for a request sent twice).
  const placed = { ...plan, matched: compaction.atSeq + plan.matched };
  const started = await carryOut({ thread, plan: placed }, request, deps);
  const instructions = request.client.instructions ?? thread.settings.openaiClient?.instructions ?? null;
  await deps.conversations.setClientSettings({
    threadId: started.thread.id,
    settings: { ...request.client, instructions },
  });
  return started;
}
