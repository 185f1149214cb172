import type { OpenAIClientSettings } from '../context/types';
import type { Thread, TranscriptMessage } from '../domain/types';
import { AppError } from '../errors/app-error';
import { assertForkSize, writeFork } from '../fork/fork-thread';
import type { TranscriptStore, TurnStore } from '../ports';
import { spendOrRefuse } from '../turn/spend-or-refuse';
import { clientToolsOf } from '../context/client-instructions';
import type { ClientMessage } from '../ports';
import type { StoredItem } from './client-view';
import { planOf } from './reconcile-history';
import { readRowsThrough } from './read-rows-through';
import { prepareUserMessage } from '../turn/send-message';
import {
  carryOut,
  refusal,
  spendFirst,
  type ChatCompletionDeps,
  type StartedCompletion,
} from './start-chat-completion';

/** Rows after an answer read to tell whether it is its thread's newest (a later user message or answer ends it). */
const LATER_ROWS_READ = 20;

export interface ContinueFromAnswerRequest {
  userId: string;
  /** The turn whose answer the request goes on from (a Responses API `previous_response_id`). */
  turnId: string;
  /** The new part of the conversation: a user message, or the results of the client tools the answer called. */
  messages: ClientMessage[];
  /** The client's settings; `instructions` null keeps the thread's (they were sent with an earlier response). */
  client: OpenAIClientSettings;
}

export type ContinueFromAnswerDeps = ChatCompletionDeps & {
  turns: Pick<TurnStore, 'findTurn'>;
  transcript: Pick<TranscriptStore, 'listTurnMessages'>;
};

/** A message a client saw as (part of) an answer: stored, complete or stopped, not forgotten or superseded. */
function isShownAnswer(message: TranscriptMessage): boolean {
  return (
    message.role === 'assistant' &&
    message.seq !== null &&
    !message.deleted &&
    !message.superseded &&
    (message.status === 'complete' || message.status === 'cancelled')
  );
}

/** The answer a turn produced (its last assistant message a client saw), in the user's thread; null when there is none. */
async function answerOf(
  request: Pick<ContinueFromAnswerRequest, 'userId' | 'turnId'>,
  deps: ContinueFromAnswerDeps,
): Promise<{ thread: Thread; answer: TranscriptMessage } | null> {
  const turn = await deps.turns.findTurn(request.turnId);
  if (!turn) return null;
  const thread = await deps.threads.findThread(turn.threadId, request.userId);
  if (!thread) return null;
  const answer = (await deps.transcript.listTurnMessages(turn.id)).filter(isShownAnswer).at(-1);
  return answer ? { thread, answer } : null;
}

/**
 * The first seq after the answer where the thread goes on without it (a user message, another answer, a tool result),
 * or null when the answer is the thread's newest (only its own notes follow it).
 */
async function continuedAt(
  thread: Thread,
  answer: TranscriptMessage,
  deps: ContinueFromAnswerDeps,
): Promise<number | null> {
  const from = (answer.seq as number) + 1;
  if (from > thread.lastSeq) return null;
  const rows = await deps.conversations.history.readRows({
    threadId: thread.id,
    fromSeq: from,
    throughSeq: thread.lastSeq,
    limit: LATER_ROWS_READ,
  });
  const later = rows.find(
    ({ message }) => message.role !== 'system' && message.seq !== null && !message.deleted && !message.superseded,
  );
  if (later) return later.message.seq;
  return rows.length === LATER_ROWS_READ ? from : null;
}

/** A fork of the thread through `throughSeq`, counted as a branch (FORKS_PER_MINUTE, MAX_THREADS_PER_USER). */
async function forkAt(
  input: { parent: Thread; throughSeq: number; userId: string },
  deps: ContinueFromAnswerDeps,
): Promise<Thread> {
  const { fork } = deps;
  assertForkSize(input.throughSeq, fork.maxForkMessages);
  await fork.guards.beforeNewThread(input.userId);
  await spendOrRefuse(fork.forkLimiter, input.userId, 'branches');
  const thread = await writeFork({ parent: input.parent, throughSeq: input.throughSeq }, fork);
  fork.log.info(
    { threadId: input.parent.id, forkId: thread.id, throughSeq: input.throughSeq },
    'continued an earlier answer on a fork (OpenAI Responses route)',
  );
  return thread;
}

/** The answer as the planner reads the item before a client's new messages: its message and the client calls it made. */
function answerItem(thread: Thread, answer: TranscriptMessage, messageId: string): StoredItem {
  const clientTools = new Set(clientToolsOf(thread).map((tool) => tool.function.name));
  const seq = answer.seq as number;
  return {
    role: 'assistant',
    content: answer.content,
    toolCalls: (answer.toolCalls ?? [])
      .filter((call) => clientTools.has(call.name))
      .map(({ id, name }) => ({ id, name })),
    messageId,
    firstSeq: seq,
    lastSeq: seq,
    inProgress: false,
    stopped: answer.status === 'cancelled',
  };
}

/**
 * The Responses API's `previous_response_id`: the request's new messages go on from the answer a turn produced. When
 * that answer is its thread's newest, in the thread; otherwise on a fork through it (the summary as it stood there),
 * the original branch keeping every message. The limit is spent first (a tool round's, or the send limit), before
 * anything is read. Null when the turn is not this user's or its answer is gone (unknown, deleted, forgotten).
 */
export async function continueFromAnswer(
  request: ContinueFromAnswerRequest,
  unspent: ContinueFromAnswerDeps,
): Promise<StartedCompletion | null> {
  const deps = { ...unspent, ...(await spendFirst(request, unspent)) } as ContinueFromAnswerDeps;
  const found = await answerOf(request, deps);
  if (!found) return null;
  const { answer } = found;
  const stop = await continuedAt(found.thread, answer, deps);
  const forked = stop !== null;
  // Every check before a branch is written: nothing is stored for a refused request.
  const check = planOf(request.messages, {
    matched: 0,
    previous: answerItem(found.thread, answer, answer.id),
    diverged: null,
    laterUser: false,
    busy: forked ? false : await deps.conversations.history.writing(found.thread.id),
  });
  if (check.kind !== 'send' && check.kind !== 'tool-results') throw refusal(check);
  if (forked && check.kind === 'send')
    await prepareUserMessage({ userId: request.userId, content: check.content }, deps.fork);
  const thread = forked
    ? await forkAt({ parent: found.thread, throughSeq: stop - 1, userId: request.userId }, deps)
    : found.thread;
  const planned = forked
    ? planOf(request.messages, {
        matched: 0,
        previous: answerItem(thread, answer, await copiedMessageId(thread, answer.seq as number, deps)),
        diverged: null,
        laterUser: false,
        busy: false,
      })
    : check;
  // Its place in the thread, not in the request (a new message's id repeats only for a request sent twice).
  const plan = { ...planned, matched: answer.seq as number };
  const started = await carryOut({ thread, plan }, request, deps);
  const instructions = request.client.instructions ?? thread.settings.openaiClient?.instructions ?? null;
  await deps.conversations.setClientSettings({
    threadId: started.thread.id,
    settings: { ...request.client, instructions },
  });
  return { ...started, forked: forked || started.forked };
}

/** The id of the fork's copy of the message at `seq`. */
async function copiedMessageId(thread: Thread, seq: number, deps: ContinueFromAnswerDeps): Promise<string> {
  const [row] = await deps.conversations.history.readRows({
    threadId: thread.id,
    fromSeq: seq,
    throughSeq: seq,
    limit: 1,
  });
  if (!row) throw new AppError('CONFLICT', 'The answer to continue from is gone from its branch.');
  return row.message.id;
}

/** Rows at a thread's end read to find the item a conversation's new input follows. */
const TAIL_ROWS_READ = 40;

/**
 * The Responses API's `conversation`: the request's new messages are appended to the thread (after its last item a
 * client saw), and the answer stored there. The limit is spent first, before anything is read. Null when the thread
 * is not this user's.
 */
export async function continueThread(
  request: Omit<ContinueFromAnswerRequest, 'turnId'> & { threadId: string },
  unspent: ContinueFromAnswerDeps,
): Promise<StartedCompletion | null> {
  const deps = { ...unspent, ...(await spendFirst(request, unspent)) } as ContinueFromAnswerDeps;
  const thread = await deps.threads.findThread(request.threadId, request.userId);
  if (!thread) return null;
  const { view } = await readRowsThrough(deps.conversations.history, thread, {
    throughSeq: thread.lastSeq,
    limit: TAIL_ROWS_READ,
  });
  const planned = planOf(request.messages, {
    matched: 0,
    previous: view.at(-1) ?? null,
    diverged: null,
    laterUser: false,
    busy: await deps.conversations.history.writing(thread.id),
  });
  const started = await carryOut({ thread, plan: { ...planned, matched: thread.lastSeq } }, request, deps);
  const instructions = request.client.instructions ?? thread.settings.openaiClient?.instructions ?? null;
  await deps.conversations.setClientSettings({
    threadId: started.thread.id,
    settings: { ...request.client, instructions },
  });
  return started;
}
