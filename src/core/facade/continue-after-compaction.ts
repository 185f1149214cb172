import { AppError } from '../errors/app-error';
import type { ClientMessage } from '../ports';
import type { OpenAIClientSettings } from '../context/types';
import { chainThrough, matchHistory } from './match-history';
import { sameText } from './reconcile-history';
import { readRowsThrough } from './read-rows-through';
import {
  carryOut,
  DEFAULT_MAX_READ_MESSAGES,
  MAX_BRANCHES_COMPARED,
  spendFirst,
  startChatCompletion,
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
  return continueFromPoint(request, await spendFirst(request, unspent));
}

/** continueAfterCompaction with its limit spent. */
async function continueFromPoint(
  request: ContinueAfterCompactionRequest,
  deps: ChatCompletionDeps,
): Promise<StartedCompletion | null> {
  const { compaction } = request;
  const thread = await deps.threads.findThread(compaction.threadId, request.userId);
  if (!thread) return null;
  if (compaction.revision > (thread.summary?.revision ?? 0) || compaction.atSeq > thread.lastSeq) return null;
  const { rows, view } = await readRowsThrough(deps.conversations.history, thread, {
    throughSeq: compaction.atSeq,
    limit: ROWS_BEFORE_READ,
    storedResults: true,
  });
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

export interface ContinueAfterHandoffRequest extends Omit<ContinueAfterCompactionRequest, 'compaction'> {
  /** The client's conversation key (a Codex session id). */
  conversation: { key: string; explicit: boolean };
  /** The summary text the handoff message carries (the answer of the turn that asked for it). */
  summary: string;
}

/**
 * The branch of a conversation holding an answer with the summary's text among its latest messages (the branches
 * most recently active first, reading FACADE_MAX_READ_MESSAGES rows at most in all), and that answer's seq.
 */
async function findHandoff(
  request: ContinueAfterHandoffRequest,
  deps: ChatCompletionDeps,
): Promise<{ threadId: string; atSeq: number } | null> {
  const branches = await deps.conversations.threadsOf({
    userId: request.userId,
    clientKey: request.conversation.key,
    limit: MAX_BRANCHES_COMPARED,
  });
  let remaining = deps.maxReadMessages ?? DEFAULT_MAX_READ_MESSAGES;
  for (const branch of branches) {
    if (remaining <= 0) break;
    const thread = await deps.threads.findThread(branch.threadId, request.userId);
    if (!thread || thread.lastSeq === 0) continue;
    const limit = Math.min(remaining, thread.lastSeq);
    const rows = await deps.conversations.history.readRows({
      threadId: thread.id,
      fromSeq: thread.lastSeq - limit + 1,
      throughSeq: thread.lastSeq,
      limit,
    });
    remaining -= rows.length;
    const answer = rows.findLast(
      ({ message }) =>
        message.role === 'assistant' &&
        !message.deleted &&
        !message.superseded &&
        sameText(message.content, request.summary),
    );
    if (answer?.message.seq) return { threadId: thread.id, atSeq: answer.message.seq };
  }
  const newest = branches[0];
  if (!newest) return null;
  const thread = await deps.threads.findThread(newest.threadId, request.userId);
  return thread ? { threadId: thread.id, atSeq: thread.lastSeq } : null;
}

/**
 * A history Codex CLI rebuilt after compacting locally (its instructions, the user messages, then one user message
 * carrying the summary a turn of the thread answered): the conversation goes on after that answer in the branch that
 * holds it, the items after the summary compared with the thread's from there (never a fork from its first message);
 * when no branch holds the answer any more, after the end of the conversation's latest branch; a conversation this
 * server never saw starts as a stateless one does. The limit is spent first.
 */
export async function continueAfterHandoff(
  request: ContinueAfterHandoffRequest,
  unspent: ChatCompletionDeps,
): Promise<StartedCompletion | null> {
  const deps = await spendFirst(request, unspent);
  const found = await findHandoff(request, deps);
  // Spent already: what is called next counts nothing more (a tool round's limit included).
  const spent = { ...deps, toolRoundLimiter: undefined };
  if (!found) return startChatCompletion(request, spent);
  const started = await continueFromPoint({ ...request, compaction: { ...found, revision: 0 } }, spent);
  // A branch the history made (an edit after the summary) is one of the conversation's: its next request finds it.
  if (started?.forked)
    await deps.conversations.link({
      userId: request.userId,
      clientKey: request.conversation.key,
      threadId: started.thread.id,
    });
  return started;
}
