import type { Thread, Turn } from '../domain/types';
import { toMessageDto } from '../dto/api-dto';
import { AppError } from '../errors/app-error';
import { editMessage, type EditDeps } from '../fork';
import { assertForkSize, writeFork } from '../fork/fork-thread';
import type { RateLimiter } from '../limits/rate-limiter';
import { regenerateAnswer, type MemoryDeps } from '../memory';
import type { ClientMessage, FacadeConversationStore, TranscriptStore, TurnStore } from '../ports';
import { prepareUserMessage } from '../turn/send-message';
import { spendOrRefuse } from '../turn/spend-or-refuse';
import { matchHistory, type ReadBudget } from './match-history';
import { chooseBranch, hintedFirst, isFullMatch, reconcileHistory, type Reconciled } from './reconcile-history';
import { requestMessageId } from './request-message-id';
import type { OpenAIClientSettings } from '../context/types';

/**
 * Branches of one conversation a request compares its history with at most (those its history's end points to first,
 * then the most recently active); the first that takes the whole history ends the comparing.
 */
export const MAX_BRANCHES_COMPARED = 20;

/** Messages one request reads to match its history, over all branches compared (FACADE_MAX_READ_MESSAGES). */
export const DEFAULT_MAX_READ_MESSAGES = 200;

/** Branches of one conversation listed per request (with the hint of each; a short read of each one's last text). */
export const MAX_BRANCHES_LISTED = 1000;

/** Longest title of a thread started by the route (its first message's start). */
const TITLE_CHARS = 80;

export interface ChatCompletionRequest {
  userId: string;
  /**
   * The conversation: the client's key (`explicit`), or one derived from its first message (best effort: a single
   * user message then always starts a new thread).
   */
  conversation: { key: string; explicit: boolean };
  /** The history without system messages, oldest first. */
  messages: ClientMessage[];
  /** The client's system messages (joined) and tools: kept as the thread's `openaiClient` settings. */
  client: OpenAIClientSettings;
}

export interface ChatCompletionDeps {
  conversations: FacadeConversationStore;
  threads: EditDeps['threads'] & {
    createThread: (input: { ownerId: string; title?: string; maxThreads: number }) => Promise<Thread>;
  };
  /** Regeneration (the memory controls' deps). */
  memory: MemoryDeps;
  /** Sends, forks and edits (the fork routes' deps). */
  fork: EditDeps;
  /** Storing a client's tool results and queueing the turn that goes on after them. */
  turns: Pick<TurnStore, 'appendTurnMessage' | 'finishMessage' | 'queueTurn'>;
  transcript: Pick<TranscriptStore, 'findMessage'>;
  /** Messages one request may read to match its history (FACADE_MAX_READ_MESSAGES; default 200). */
  maxReadMessages?: number;
  /**
   * What a tool round spends instead of the send limit (TOOL_ROUNDS_PER_MINUTE): a request whose history ends with
   * the results of client tools, going on with the turn that called them. Unset: the send limit.
   */
  toolRoundLimiter?: RateLimiter;
}

/** The turn a request queued (the caller kicks the runner and waits for it). */
export interface StartedCompletion {
  thread: Thread;
  turn: Turn;
  /** True when the request continued on a new fork (an edit, or a regeneration of an earlier message). */
  forked: boolean;
}

export interface Candidate {
  thread: Thread;
  plan: Reconciled;
}

/** The send limit of a request that has spent it already (its first step): what it calls next counts nothing more. */
const ALREADY_SPENT: RateLimiter = {
  hit: async () => ({ allowed: true }),
  check: async () => ({ allowed: true }),
};

/**
 * The OpenAI-compatible route's use case: reconciles the client's whole history with the conversation's threads,
 * picks the branch it follows and queues the turn it asks for (a send, a regeneration, an edit on a fork), through
 * the same checks as REST (message size, queue bound, thread quota). The send limit (RATE_LIMIT_PER_MINUTE) is spent
 * first, before any transcript is read, whatever the request turns out to be (a refused or busy history counts too);
 * a branch the request makes also spends the fork limit, after the plan. Nothing is stored when a check fails. The
 * caller kicks the turn runner.
 */
export async function startChatCompletion(
  request: ChatCompletionRequest,
  unspent: ChatCompletionDeps,
): Promise<StartedCompletion> {
  const deps = await spendFirst(request, unspent);
  const chosen = startsAfresh(request) ? null : chooseBranch(await candidatesOf(request, deps));
  if (!chosen) return startNewThread(request, deps);
  const started = await carryOut(chosen, request, deps);
  if (started.forked)
    await deps.conversations.link({
      userId: request.userId,
      clientKey: request.conversation.key,
      threadId: started.thread.id,
    });
  await deps.conversations.setClientSettings({ threadId: started.thread.id, settings: request.client });
  return started;
}

/** A request whose history ends with client tools' results: a tool round of the turn that called them. */
export function isToolRound(messages: readonly ClientMessage[]): boolean {
  return messages.at(-1)?.role === 'tool';
}

/**
 * Spends the request's limit, before anything is read: a tool round's (TOOL_ROUNDS_PER_MINUTE, when set), else the
 * send limit. The deps returned count nothing more for the sends, regenerations and edits the request then makes.
 */
export async function spendFirst(
  request: Pick<ChatCompletionRequest, 'userId' | 'messages'>,
  unspent: ChatCompletionDeps,
): Promise<ChatCompletionDeps> {
  const toolRound = isToolRound(request.messages) && unspent.toolRoundLimiter !== undefined;
  if (toolRound) await spendOrRefuse(unspent.toolRoundLimiter as RateLimiter, request.userId, 'tool rounds');
  else await spendOrRefuse(unspent.fork.sendLimiter, request.userId);
  return {
    ...unspent,
    fork: { ...unspent.fork, sendLimiter: ALREADY_SPENT },
    memory: { ...unspent.memory, sendLimiter: ALREADY_SPENT },
  };
}

/** Without a key, a conversation of one user message is a new one (many chats begin alike). */
function startsAfresh(request: ChatCompletionRequest): boolean {
  return !request.conversation.explicit && request.messages.length === 1;
}

/**
 * The conversation's branches compared with the history: at most MAX_BRANCHES_COMPARED, the branches the history's
 * end points to first, stopping at one that takes the whole history. Each comparison reads only the messages around
 * the point where history and branch part (match-history.ts), at most `maxReadMessages` in all: a branch the budget
 * does not reach to the end of is refused, and no further branch is compared.
 */
export async function candidatesOf(
  request: Pick<ChatCompletionRequest, 'userId' | 'conversation' | 'messages'>,
  deps: Pick<ChatCompletionDeps, 'conversations' | 'threads' | 'maxReadMessages'>,
): Promise<Candidate[]> {
  const branches = await deps.conversations.threadsOf({
    userId: request.userId,
    clientKey: request.conversation.key,
    limit: MAX_BRANCHES_LISTED,
  });
  const maxRead = deps.maxReadMessages ?? DEFAULT_MAX_READ_MESSAGES;
  const budget: ReadBudget = { remaining: maxRead };
  const candidates: Candidate[] = [];
  for (const branch of hintedFirst(branches, request.messages).slice(0, MAX_BRANCHES_COMPARED)) {
    const thread = await deps.threads.findThread(branch.threadId, request.userId);
    if (!thread) continue;
    const plan = await matchHistory({ thread, client: request.messages, budget }, deps.conversations.history);
    if (!plan) {
      candidates.push({ thread, plan: { kind: 'refuse', reason: tooFarApart(maxRead), matched: 0 } });
      break;
    }
    candidates.push({ thread, plan });
    if (isFullMatch(plan)) break;
  }
  return candidates;
}

function tooFarApart(maxRead: number): string {
  return `messages: comparing this history with the conversation takes reading more than ${maxRead} of its messages (FACADE_MAX_READ_MESSAGES); start a new conversation, or send the history as the conversation holds it.`;
}

async function startNewThread(request: ChatCompletionRequest, deps: ChatCompletionDeps): Promise<StartedCompletion> {
  const plan = reconcileHistory(request.messages, []);
  if (plan.kind !== 'send') throw refusal(plan);
  const { fork } = deps;
  const clientMessageId = requestMessageId({ kind: 'send', position: 0, content: plan.content });
  const prepared = await prepareUserMessage({ userId: request.userId, content: plan.content, clientMessageId }, fork);
  const thread = await deps.threads.createThread({
    ownerId: request.userId,
    title: titleOf(plan.content),
    maxThreads: fork.maxThreadsPerUser,
  });
  await deps.conversations.link({ userId: request.userId, clientKey: request.conversation.key, threadId: thread.id });
  const accepted = await fork.turns.acceptUserMessage({
    threadId: thread.id,
    ownerId: request.userId,
    ...prepared,
    maxQueued: fork.maxQueuedTurns,
  });
  await deps.conversations.setClientSettings({ threadId: thread.id, settings: request.client });
  return { thread, turn: accepted.turn, forked: false };
}

function titleOf(content: string): string {
  const line = content.trim().split('\n')[0] ?? '';
  return line.length > TITLE_CHARS ? `${line.slice(0, TITLE_CHARS - 1)}…` : line || 'New chat';
}

/** Why a plan cannot be carried out (busy: CONFLICT; refused: VALIDATION naming `messages`). */
export function refusal(plan: Reconciled): AppError {
  if (plan.kind === 'busy')
    return new AppError(
      'CONFLICT',
      'An answer in this conversation is still being written; wait for it, then send again.',
    );
  if (plan.kind === 'refuse') return new AppError('VALIDATION', plan.reason, { details: { field: 'messages' } });
  return new AppError('VALIDATION', 'messages: this history cannot start a conversation.', {
    details: { field: 'messages' },
  });
}

/** Carries out the plan chosen for a branch (deps already spent: see spendFirst). */
export async function carryOut(
  chosen: Candidate,
  request: Pick<ChatCompletionRequest, 'userId'>,
  deps: ChatCompletionDeps,
): Promise<StartedCompletion> {
  const { thread, plan } = chosen;
  const { fork } = deps;
  switch (plan.kind) {
    case 'send': {
      const clientMessageId = requestMessageId({ kind: 'send', position: plan.matched, content: plan.content });
      const prepared = await prepareUserMessage(
        { userId: request.userId, content: plan.content, clientMessageId },
        fork,
      );
      const accepted = await fork.turns.acceptUserMessage({
        threadId: thread.id,
        ownerId: request.userId,
        ...prepared,
        maxQueued: fork.maxQueuedTurns,
      });
      return { thread, turn: accepted.turn, forked: false };
    }
    case 'regenerate': {
      if (plan.forkThroughSeq === null) {
        const { turn } = await regenerateAnswer(
          { actor: { userId: request.userId, admin: false }, threadId: thread.id },
          deps.memory,
        );
        return { thread, turn, forked: false };
      }
      return regenerateOnFork({ parent: thread, throughSeq: plan.forkThroughSeq, userId: request.userId }, deps);
    }
    case 'edit': {
      // A branch the route makes counts as one (FORKS_PER_MINUTE) besides the send it carries.
      await spendOrRefuse(fork.forkLimiter, request.userId, 'branches');
      const clientMessageId = requestMessageId({ kind: 'edit', position: plan.matched, content: plan.content });
      const edited = await editMessage(
        {
          userId: request.userId,
          threadId: thread.id,
          messageId: plan.userMessageId,
          content: plan.content,
          clientMessageId,
        },
        fork,
      );
      return { thread: edited.thread, turn: edited.accepted.turn, forked: true };
    }
    case 'tool-results':
      return continueAfterToolResults(
        {
          thread,
          userId: request.userId,
          assistantMessageId: plan.assistantMessageId,
          results: plan.results,
          then: plan.then,
        },
        deps,
      );
    default:
      throw refusal(plan);
  }
}

/** A regeneration of an earlier user message: a fork through it, answered again there (the original keeps its answer). */
async function regenerateOnFork(
  input: { parent: Thread; throughSeq: number; userId: string },
  deps: ChatCompletionDeps,
): Promise<StartedCompletion> {
  const { fork, memory } = deps;
  assertForkSize(input.throughSeq, fork.maxForkMessages);
  await fork.guards.beforeNewThread(input.userId);
  await spendOrRefuse(fork.forkLimiter, input.userId, 'branches');
  await spendOrRefuse(fork.sendLimiter, input.userId);
  const thread = await writeFork({ parent: input.parent, throughSeq: input.throughSeq }, fork);
  const userMessage = await memory.memory.lastUserMessage(thread.id);
  if (!userMessage) throw new AppError('CONFLICT', 'There is no message to answer again.');
  const { turn } = await memory.memory.queueRegenerate({ threadId: thread.id, userMessageId: userMessage.id });
  fork.log.info(
    { threadId: input.parent.id, forkId: thread.id, throughSeq: input.throughSeq },
    'regeneration on a fork (OpenAI route)',
  );
  return { thread, turn, forked: true };
}

/**
 * The client ran the tools the last answer called: their results join the thread as tool messages (in the answer's
 * turn, with their context entries), then the conversation goes on: with the client's new user message when it sent
 * one, else as a follow-up turn that answers from the results. The checks (rate limit, sizes) come before any write.
 */
async function continueAfterToolResults(
  input: {
    thread: Thread;
    userId: string;
    assistantMessageId: string;
    results: { toolCallId: string; content: string }[];
    then: string | null;
  },
  deps: ChatCompletionDeps,
): Promise<StartedCompletion> {
  const { fork, turns } = deps;
  const { thread } = input;
  const prepared =
    input.then !== null ? await prepareUserMessage({ userId: input.userId, content: input.then }, fork) : null;
  if (!prepared) await spendOrRefuse(fork.sendLimiter, input.userId);
  const oversized = input.results.find((result) => result.content.length > fork.maxMessageChars);
  if (oversized)
    throw new AppError(
      'TOO_LARGE',
      `The result of tool call ${oversized.toolCallId} has ${oversized.content.length} characters; the limit is ${fork.maxMessageChars}.`,
      { details: { field: 'messages' } },
    );
  const assistant = await deps.transcript.findMessage(thread.id, input.assistantMessageId);
  if (!assistant?.turnId) throw new AppError('CONFLICT', 'The answer that called these tools is gone.');
  const { counter } = fork.settings;
  for (const result of input.results) {
    const started = await turns.appendTurnMessage({
      threadId: thread.id,
      turnId: assistant.turnId,
      role: 'tool',
      content: '',
      status: 'streaming',
      toolCallId: result.toolCallId,
    });
    const tokens = counter.countMessage({ role: 'tool', content: result.content });
    const finished = await turns.finishMessage({
      messageId: started.id,
      content: result.content,
      status: 'complete',
      tokens,
      encoding: counter.encoding,
      entry: { role: 'tool', content: result.content, tokens, toolCallId: result.toolCallId },
    });
    deps.memory.events.publish({ type: 'message-end', threadId: thread.id, message: toMessageDto(finished) });
  }
  if (prepared) {
    const accepted = await fork.turns.acceptUserMessage({
      threadId: thread.id,
      ownerId: input.userId,
      ...prepared,
      maxQueued: fork.maxQueuedTurns,
    });
    return { thread, turn: accepted.turn, forked: false };
  }
  const turn = await turns.queueTurn({
    threadId: thread.id,
    kind: 'follow-up',
    userMessageId: null,
    maxQueued: fork.maxQueuedTurns,
  });
  return { thread, turn, forked: false };
}
