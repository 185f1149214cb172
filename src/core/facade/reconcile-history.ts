import type { StoredItem } from './client-view';
import type { ClientMessage } from '../ports';

/**
 * What a stateless client's request means for one thread, given the history it sent and what the thread holds:
 * - `send`: the client's history is the thread's, plus one new user message: a turn.
 * - `tool-results`: the thread's last answer called client tools; the history adds their results (then maybe a user
 *   message): stored as tool messages before the turn goes on.
 * - `regenerate`: the history ends with a user message the thread already answered: answer it again, in place when it
 *   is the thread's last user message, otherwise on a fork through it (`forkThroughSeq`).
 * - `edit`: the history diverges at a user message of the thread and ends there: the edit, on a fork before it.
 * - `busy`: an answer is being written in the thread right now.
 * - `refuse`: nothing this server can do with the history in this thread (`reason` says why).
 * `matched` counts the leading history items the thread holds (for picking between branches).
 */
export type ReconcilePlan =
  | { kind: 'send'; content: string }
  | {
      kind: 'tool-results';
      assistantMessageId: string;
      results: { toolCallId: string; content: string }[];
      then: string | null;
    }
  | { kind: 'regenerate'; userMessageId: string; forkThroughSeq: number | null }
  | { kind: 'edit'; userMessageId: string; content: string }
  | { kind: 'busy' }
  | { kind: 'refuse'; reason: string };

export type Reconciled = ReconcilePlan & { matched: number };

/** Texts compare as a client may hand them back: line endings and surrounding white space do not count. */
export function sameText(left: string, right: string): boolean {
  return normalize(left) === normalize(right);
}

/**
 * A stopped answer as the client kept it: what it received before it went away, the thread's text running on a little
 * (the deltas in flight when it stopped), or a client that kept more than the thread.
 */
function sameStart(client: string, stored: string): boolean {
  const [left, right] = [normalize(client), normalize(stored)];
  return left.length > 0 && right.length > 0 && (right.startsWith(left) || left.startsWith(right));
}

/** A text as the route compares it (and hashes it: src/db/client-prefix-hash.ts): \r\n and \r as \n, trimmed. */
export function normalize(text: string): string {
  return text.replace(/\r\n?/g, '\n').trim();
}

/** Whether a client's history item and a stored item are the same message (a stopped answer may differ at its end). */
export function sameItem(client: ClientMessage, stored: StoredItem): boolean {
  if (client.role !== stored.role) return false;
  if (client.role === 'user') return sameText(client.content, stored.content);
  if (client.role === 'tool')
    return (
      stored.role === 'tool' && client.toolCallId === stored.toolCallId && sameText(client.content, stored.content)
    );
  if (stored.role !== 'assistant') return false;
  if (!sameText(client.content, stored.content) && !(stored.stopped && sameStart(client.content, stored.content)))
    return false;
  const calls = client.toolCalls.map((call) => call.id);
  return calls.length === stored.toolCalls.length && stored.toolCalls.every((call, index) => call.id === calls[index]);
}

/** How many leading items of the client's history the thread holds, in order. */
export function matchedPrefix(client: readonly ClientMessage[], stored: readonly StoredItem[]): number {
  let matched = 0;
  while (
    matched < client.length &&
    matched < stored.length &&
    sameItem(client[matched] as ClientMessage, stored[matched] as StoredItem)
  )
    matched += 1;
  return matched;
}

/**
 * What a plan needs of a thread's client view, given how many leading items of the history it holds (`matched`): the
 * item before that point and the one at it (null: the view ends there), whether a user item comes at or after it,
 * and whether an item is being written. The history matching (match-history.ts) finds them without reading the view.
 */
export interface MatchFacts {
  matched: number;
  previous: StoredItem | null;
  diverged: StoredItem | null;
  laterUser: boolean;
  busy: boolean;
}

/** Reconciles one client history with one thread's client view (see ReconcilePlan). */
export function reconcileHistory(client: readonly ClientMessage[], stored: readonly StoredItem[]): Reconciled {
  const matched = matchedPrefix(client, stored);
  return planOf(client, {
    matched,
    previous: stored[matched - 1] ?? null,
    diverged: stored[matched] ?? null,
    laterUser: stored.slice(matched).some((item) => item.role === 'user'),
    busy: stored.some((item) => item.inProgress),
  });
}

/** The plan for a history, from the facts of the thread's view at the point where they part (see MatchFacts). */
export function planOf(client: readonly ClientMessage[], facts: MatchFacts): Reconciled {
  const plan = facts.busy ? { kind: 'busy' as const } : planFor(client, facts);
  return { ...plan, matched: facts.matched };
}

function planFor(client: readonly ClientMessage[], facts: MatchFacts): ReconcilePlan {
  const { matched, previous, diverged } = facts;
  if (diverged === null) return planAfterThread(client.slice(matched), previous ?? undefined);
  if (matched === client.length) return planForPrefix(previous, facts.laterUser);
  const next = client[matched] as ClientMessage;
  if (next.role === 'user' && diverged.role === 'user' && client.length === matched + 1) {
    return { kind: 'edit', userMessageId: diverged.messageId, content: next.content };
  }
  if (next.role === 'user' && diverged.role === 'user') {
    return {
      kind: 'refuse',
      reason: `messages[${matched}] differs from the conversation and is followed by messages this server never saw; edit only the last user message, or start a new conversation.`,
    };
  }
  return {
    kind: 'refuse',
    reason: `messages[${matched}] (${next.role}) differs from the conversation's ${diverged.role} message at that point; only a user message can be changed.`,
  };
}

/** The whole thread matched: what the client added after it. */
function planAfterThread(extras: readonly ClientMessage[], last: StoredItem | undefined): ReconcilePlan {
  if (extras.length === 0) {
    if (last?.role === 'user') return { kind: 'regenerate', userMessageId: last.messageId, forkThroughSeq: null };
    if (last?.role === 'assistant' && last.toolCalls.length > 0)
      return {
        kind: 'refuse',
        reason: 'The last assistant message called tools: send their results as tool messages.',
      };
    return { kind: 'refuse', reason: 'The conversation already ends with this answer: add a user message.' };
  }
  const pending = pendingCalls(last);
  const results: { toolCallId: string; content: string }[] = [];
  let index = 0;
  for (; index < extras.length && extras[index]?.role === 'tool'; index += 1) {
    const result = extras[index] as Extract<ClientMessage, { role: 'tool' }>;
    results.push({ toolCallId: result.toolCallId, content: result.content });
  }
  const rest = extras.slice(index);
  const then = rest.length === 1 && rest[0]?.role === 'user' ? rest[0].content : null;
  if (rest.length > 1 || (rest.length === 1 && then === null)) {
    return {
      kind: 'refuse',
      reason: `messages[${extras.length > 1 ? 'from the new ones' : 'last'}]: this server only adds one new user message (or the results of the client tools called last) to a conversation it holds; it cannot adopt assistant messages it did not write.`,
    };
  }
  if (results.length === 0) return { kind: 'send', content: then as string };
  if (pending.length === 0)
    return { kind: 'refuse', reason: "A tool message answers no tool call of the conversation's last answer." };
  const answered = results.map((result) => result.toolCallId);
  const unknown = answered.find((id) => !pending.includes(id));
  if (unknown !== undefined)
    return { kind: 'refuse', reason: `The tool message for ${unknown} answers no open tool call.` };
  const missing = pending.find((id) => !answered.includes(id));
  if (missing !== undefined) return { kind: 'refuse', reason: `The tool call ${missing} has no tool message.` };
  return { kind: 'tool-results', assistantMessageId: (last as StoredItem).messageId, results, then };
}

/** The client tool calls of the last answer still waiting for results. */
function pendingCalls(last: StoredItem | undefined): string[] {
  return last?.role === 'assistant' ? last.toolCalls.map((call) => call.id) : [];
}

/** The client's history is a strict prefix of the thread: it asks again from its last message. */
function planForPrefix(last: StoredItem | null, laterUser: boolean): ReconcilePlan {
  if (!last || last.role !== 'user')
    return { kind: 'refuse', reason: 'The last message must be a user message (or the results of client tools).' };
  return { kind: 'regenerate', userMessageId: last.messageId, forkThroughSeq: laterUser ? last.lastSeq : null };
}

/**
 * Branches to compare first: those whose last text ends the client's last message or the one before it (the branch a
 * history goes on, or answers again), then the rest in their order (the most recently active first). Only an order:
 * the comparison decides.
 */
export function hintedFirst<T extends { lastTextTail: string | null }>(
  branches: readonly T[],
  client: readonly ClientMessage[],
): T[] {
  const texts = client.slice(-2).map((message) => normalize(message.content));
  const hinted = (branch: T) => {
    const tail = branch.lastTextTail === null ? '' : normalize(branch.lastTextTail);
    return tail !== '' && texts.some((text) => text.endsWith(tail));
  };
  return [...branches.filter(hinted), ...branches.filter((branch) => !hinted(branch))];
}

/** A plan that takes the whole history as it is (nothing forked): no other branch can do better. */
export function isFullMatch(plan: Reconciled): boolean {
  return rankOf(plan) === FULL_MATCH;
}

const FULL_MATCH = 4;

/** The rank of a plan when several branches of one conversation could take a request: a full match first. */
function rankOf(candidate: Reconciled): number {
  switch (candidate.kind) {
    case 'send':
    case 'tool-results':
      return FULL_MATCH;
    case 'regenerate':
      return candidate.forkThroughSeq === null ? FULL_MATCH : 2;
    case 'edit':
      return 2;
    case 'busy':
      return 1;
    default:
      return 0;
  }
}

/**
 * The branch a request follows among the threads its conversation reached (newest first): one the history fully
 * matches, else the one holding the longest part of it (forked there), else the newest.
 */
export function chooseBranch<T extends { plan: Reconciled }>(candidates: readonly T[]): T | null {
  let best: T | null = null;
  for (const candidate of candidates) {
    if (!best) {
      best = candidate;
      continue;
    }
    const rank = rankOf(candidate.plan);
    const bestRank = rankOf(best.plan);
    if (rank > bestRank || (rank === bestRank && rank === 2 && candidate.plan.matched > best.plan.matched))
      best = candidate;
  }
  return best;
}
