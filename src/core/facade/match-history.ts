import type { Thread } from '../domain/types';
import { clientToolsOf } from '../context/client-instructions';
import { clientViewOf, type StoredItem } from './client-view';
import type { ClientHistoryStore, ClientMessage, ClientViewRow, PrefixHit } from '../ports';
import { matchedPrefix, planOf, reconcileHistory, type MatchFacts, type Reconciled } from './reconcile-history';

/** Messages one window of the matching reads at first (doubled while one item does not fit). */
const FIRST_WINDOW = 16;

/** What a request may still read (FACADE_MAX_READ_MESSAGES at its start), spent by every message read. */
export interface ReadBudget {
  remaining: number;
}

/** Where the comparison stands: client items before `index` equal the thread's view; its next item starts at `fromSeq`. */
export interface Position {
  index: number;
  fromSeq: number;
  /** The stored chain through item index - 1 (null: not known, or index 0). */
  chain: Uint8Array | null;
  /** The view's item index - 1, when read. */
  previous: StoredItem | null;
}

/**
 * The plan for a client's history in one thread (as reconcileHistory on the thread's whole client view), reading only
 * the messages around the point where history and thread part: the longest common part is found by its chain hash
 * (as written by the database), then read from the start of its last item on. A stopped answer the client kept only in
 * part breaks the chain: the comparison goes on past it and looks up the rest from there. Null when the budget ran out
 * first (the caller refuses the history). `start`: the history goes on from that point of the thread (a compaction
 * item's: its items are compared with the thread's after it), not from its first message.
 */
export async function matchHistory(
  input: { thread: Thread; client: readonly ClientMessage[]; budget: ReadBudget; start?: Position },
  store: ClientHistoryStore,
): Promise<Reconciled | null> {
  const { thread, client, budget } = input;
  if (thread.lastSeq === 0) return reconcileHistory(client, []);
  if (await spend(budget, store.writing(thread.id), 1))
    return planOf(client, { matched: 0, previous: null, diverged: null, laterUser: false, busy: true });
  const names = new Set(clientToolsOf(thread).map((tool) => tool.function.name));
  let position: Position = input.start ?? { index: 0, fromSeq: 1, chain: null, previous: null };
  let window = FIRST_WINDOW;
  for (;;) {
    const hit = await findFrom(position, { thread, client, budget }, store);
    if (hit === undefined) return null;
    if (hit) position = hit;
    if (budget.remaining <= 0) return null;
    const limit = Math.min(window, budget.remaining);
    const rows = await store.readRows({
      threadId: thread.id,
      fromSeq: position.fromSeq,
      throughSeq: thread.lastSeq,
      limit,
    });
    budget.remaining -= rows.length;
    const atEnd = rows.length < limit || (rows.at(-1)?.message.seq ?? 0) >= thread.lastSeq;
    const items = windowItems(rows, names, atEnd);
    const matched = matchedPrefix(client.slice(position.index), items);
    // A history that ends with the window's items still needs the item after them (or the thread's end).
    if (matched < items.length || atEnd) {
      const facts = await factsAt({ position, items, matched, rows, atEnd, thread }, budget, store);
      return facts ? planOf(client, { ...facts, busy: false }) : null;
    }
    // The whole window matched and the thread goes on: continue after its last item.
    const last = items.at(-1);
    if (!last) {
      window *= 2;
      continue;
    }
    position = {
      index: position.index + matched,
      fromSeq: last.lastSeq + 1,
      chain: chainThrough(last, rows),
      previous: last,
    };
    window = FIRST_WINDOW;
  }
}

/**
 * Jumps ahead by hash: the latest message whose chain hash is one of the client's from `position` on. Null: none
 * (the next item is compared as read); undefined: the budget ran out.
 */
async function findFrom(
  position: Position,
  input: { thread: Thread; client: readonly ClientMessage[]; budget: ReadBudget },
  store: ClientHistoryStore,
): Promise<Position | null | undefined> {
  const { thread, client, budget } = input;
  const started = position.index > 0 || position.fromSeq > 1;
  if (position.index >= client.length || (started && position.chain === null)) return null;
  const hashes = store.chainHashes({ messages: client, from: position.index, base: position.chain });
  const found = await store.findPrefix({
    threadId: thread.id,
    hashes,
    afterSeq: position.fromSeq - 1,
    throughSeq: thread.lastSeq,
  });
  budget.remaining -= found ? 1 : 0;
  if (budget.remaining < 0) return undefined;
  if (!found) return null;
  const count = hashes.findIndex((hash) => sameBytes(hash, found.prefixHash)) + 1;
  // Compare again from the start of the item the hit ends (an answer may go on after it).
  return { index: position.index + count - 1, fromSeq: itemStart(found), chain: null, previous: null };
}

/** Where the item a hit ends starts: an answer's first part, for a hit on an answer or on a note it joined. */
function itemStart(hit: PrefixHit): number {
  return (hit.role === 'assistant' || hit.role === 'system') && hit.answerFrom !== null ? hit.answerFrom : hit.seq;
}

/**
 * The view's items of a window of rows that starts where an item starts. A client tool's result is recognised by its
 * chain hash (its call may lie before the window). An answer that reaches the end of a window short of the thread's
 * end may go on: left out (read again from its start).
 */
function windowItems(rows: readonly ClientViewRow[], names: ReadonlySet<string>, atEnd: boolean): StoredItem[] {
  const clientResults = new Set(
    rows.flatMap((row) =>
      row.message.role === 'tool' && row.prefixHash !== null && row.message.toolCallId !== null
        ? [row.message.toolCallId]
        : [],
    ),
  );
  const items = clientViewOf(
    rows.map((row) => row.message),
    { isClientCall: (name) => names.has(name), clientResults },
  );
  const last = items.at(-1);
  if (!atEnd && last?.role === 'assistant' && last.toolCalls.length === 0) items.pop();
  return items;
}

/** The stored chain through an item: the hash of its last message that has one (null: not known yet). */
export function chainThrough(item: StoredItem, rows: readonly ClientViewRow[]): Uint8Array | null {
  for (let index = rows.length - 1; index >= 0; index -= 1) {
    const row = rows[index] as ClientViewRow;
    const seq = row.message.seq ?? 0;
    if (seq <= item.lastSeq && seq >= item.firstSeq && row.prefixHash !== null) return row.prefixHash;
  }
  return null;
}

/** The facts of the view where the history parts from it (see MatchFacts), from the last window read. */
async function factsAt(
  input: {
    position: Position;
    items: readonly StoredItem[];
    matched: number;
    rows: readonly ClientViewRow[];
    atEnd: boolean;
    thread: Thread;
  },
  budget: ReadBudget,
  store: ClientHistoryStore,
): Promise<Omit<MatchFacts, 'busy'> | null> {
  const { position, items, matched, rows, atEnd, thread } = input;
  const previous = matched > 0 ? (items[matched - 1] as StoredItem) : position.previous;
  const diverged = items[matched] ?? null;
  let laterUser = items.slice(matched).some((item) => item.role === 'user');
  if (!laterUser && !atEnd) {
    const afterSeq = rows.at(-1)?.message.seq ?? position.fromSeq - 1;
    laterUser = await spend(budget, store.userAfter({ threadId: thread.id, afterSeq, throughSeq: thread.lastSeq }), 1);
    if (budget.remaining < 0) return null;
  }
  return { matched: position.index + matched, previous, diverged, laterUser };
}

/** Awaits a yes/no read, counting one message read when it says yes (the message it found). */
async function spend(budget: ReadBudget, read: Promise<boolean>, cost: number): Promise<boolean> {
  const answer = await read;
  if (answer) budget.remaining -= cost;
  return answer;
}

function sameBytes(left: Uint8Array, right: Uint8Array): boolean {
  return left.length === right.length && left.every((byte, index) => byte === right[index]);
}
