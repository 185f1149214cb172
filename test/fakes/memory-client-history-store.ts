import { isHidden } from '../../src/core/facade/client-view';
import type { ClientHistoryStore, ClientMessage, ClientViewRow } from '../../src/core/ports';
import { chainHashes } from '../../src/db/client-prefix-hash';
import { toMessage, type MemoryDatabase, type MessageRow } from './memory-database';

/** A message's columns client_prefix_hash, client_chain and client_answer_from (see client_view_state). */
interface ChainState {
  prefixHash: Uint8Array | null;
  /** The chain of the items closed through the message; null: not known (a message at or before it still streams). */
  chain: Uint8Array | null;
  answerFrom: number | null;
}

/**
 * The chain before a thread's first item (sha256('client-view') in SQL): chainHashes starts from it when given no
 * base. Empty, so it is never equal to a hash.
 */
const START = new Uint8Array(0);

/** The chain through one more item, hashed by the route's own code (src/db/client-prefix-hash.ts). */
const link = (chain: Uint8Array, item: ClientMessage): Uint8Array =>
  chainHashes({ messages: [item], from: 0, base: chain === START ? null : chain })[0] as Uint8Array;

const sameBytes = (left: Uint8Array | null, right: Uint8Array | null): boolean =>
  left === right ||
  (left !== null && right !== null && left.length === right.length && left.every((byte, i) => byte === right[i]));

/** Text as Postgres stores it: a lone surrogate cannot be held in UTF-8 (it becomes U+FFFD). */
const stored = (text: string): string =>
  text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

/** client_view_tool_names: the names of the thread's client tools (settings.openaiClient.tools). */
function clientToolNames(database: MemoryDatabase, threadId: string): Set<string> {
  const tools = database.threads.get(threadId)?.settings.openaiClient?.tools;
  return new Set(Array.isArray(tools) ? tools.map((tool) => tool.function.name) : []);
}

/** client_view_client_result: a tool message answering a call of a client tool, made earlier in its turn. */
function isClientResult(message: MessageRow, rows: readonly MessageRow[], names: ReadonlySet<string>): boolean {
  return (
    message.turnId !== null &&
    message.toolCallId !== null &&
    rows.some(
      (answer) =>
        answer.turnId === message.turnId &&
        (answer.seq as number) < (message.seq as number) &&
        answer.role === 'assistant' &&
        !isHidden(answer) &&
        (answer.toolCalls ?? []).some((call) => call.id === message.toolCallId && names.has(call.name)),
    )
  );
}

/**
 * ClientHistoryStore in memory (test/contracts/client-history-store.contract.ts holds it to the Postgres repository's
 * behaviour). The repository reads chain states the database's triggers wrote (prisma/functions/client_view_state.sql);
 * this fake computes the same states on each read, from the thread's rows in seq order, by the same steps. Unlike
 * the triggers, which hash when a message is written, it reads the thread's client tools as they are now.
 */
export function createMemoryClientHistoryStore(database: MemoryDatabase): ClientHistoryStore {
  const rowsOf = (threadId: string): MessageRow[] =>
    database.messages
      .filter((message) => message.threadId === threadId && message.seq !== null)
      .sort((a, b) => (a.seq as number) - (b.seq as number));

  /** The thread's rows with seqs, in seq order, each with its chain state. */
  const statesOf = (threadId: string): { row: MessageRow; state: ChainState }[] => {
    const rows = rowsOf(threadId);
    const names = clientToolNames(database, threadId);
    const states: { row: MessageRow; state: ChainState }[] = [];
    for (const row of rows) {
      const state = stateOf({ message: row, rows, before: states, names });
      states.push({ row, state });
    }
    return states;
  };

  return {
    chainHashes,

    async findPrefix({ threadId, hashes, afterSeq, throughSeq }) {
      const found = statesOf(threadId)
        .filter(({ row }) => (row.seq as number) > afterSeq && (row.seq as number) <= throughSeq)
        .filter(({ state }) => hashes.some((hash) => sameBytes(hash, state.prefixHash)))
        .at(-1);
      if (!found?.state.prefixHash) return null;
      return {
        seq: found.row.seq as number,
        role: found.row.role,
        prefixHash: new Uint8Array(found.state.prefixHash),
        answerFrom: found.state.answerFrom,
      };
    },

    async readRows({ threadId, fromSeq, throughSeq, limit }) {
      return statesOf(threadId)
        .filter(({ row }) => (row.seq as number) >= fromSeq && (row.seq as number) <= throughSeq)
        .slice(0, limit)
        .map(({ row, state }): ClientViewRow => ({
          message: toMessage(row),
          prefixHash: state.prefixHash && new Uint8Array(state.prefixHash),
          answerFrom: state.answerFrom,
        }));
    },

    async writing(threadId) {
      const rows = rowsOf(threadId);
      const names = clientToolNames(database, threadId);
      return rows.some(
        (message) =>
          message.status === 'streaming' &&
          !isHidden(message) &&
          (message.role !== 'tool' || isClientResult(message, rows, names)),
      );
    },

    async userAfter({ threadId, afterSeq, throughSeq }) {
      return rowsOf(threadId).some(
        (message) =>
          (message.seq as number) > afterSeq &&
          (message.seq as number) <= throughSeq &&
          message.role === 'user' &&
          !isHidden(message),
      );
    },
  };
}

/** The rows of `before` (in seq order) from `fromSeq` on: a thread's open answer, read from its end. */
function since<T extends { row: MessageRow }>(before: readonly T[], fromSeq: number): readonly T[] {
  let start = before.length;
  while (start > 0 && ((before[start - 1] as T).row.seq as number) >= fromSeq) start -= 1;
  return before.slice(start);
}

const UNKNOWN: ChainState = { prefixHash: null, chain: null, answerFrom: null };

/**
 * client_view_state: message's state from the one before it (`before`: the states of the thread's earlier rows, in
 * seq order).
 */
function stateOf(input: {
  message: MessageRow;
  rows: readonly MessageRow[];
  before: readonly { row: MessageRow; state: ChainState }[];
  names: ReadonlySet<string>;
}): ChainState {
  const { message, rows, before, names } = input;
  const seq = message.seq as number;
  if (message.status === 'streaming') return UNKNOWN;
  const previous = before.at(-1)?.state;
  if (previous && previous.chain === null) return UNKNOWN;
  const previousChain = previous?.chain ?? START;
  // An answer is open after the message before when it carries one that it did not close (client calls close it).
  const previousFrom =
    previous && previous.answerFrom !== null && !sameBytes(previous.prefixHash, previous.chain)
      ? previous.answerFrom
      : null;
  const passThrough: ChainState = { prefixHash: null, chain: previousChain, answerFrom: previousFrom };
  if (isHidden(message)) return passThrough;
  if (message.role === 'system') return noteState({ message, before, names, previousChain, previousFrom });
  if (message.role === 'assistant')
    return answerState({
      message,
      before,
      names,
      base: previousChain,
      answerFrom: previousFrom ?? seq,
      calls: message.toolCalls ?? [],
      closes: false,
    });
  // A server tool's result: inside its answer, not part of what the client saw.
  if (message.role === 'tool' && !isClientResult(message, rows, names)) return passThrough;
  // A user message or a client tool's result closes the open answer (its last part's hash is the answer's).
  const closed =
    previousFrom === null
      ? previousChain
      : (since(before, previousFrom)
          .filter(({ state }) => state.prefixHash !== null)
          .at(-1)?.state.prefixHash ?? null);
  if (closed === null) return UNKNOWN;
  const content = stored(message.content);
  const item: ClientMessage =
    message.role === 'tool'
      ? { role: 'tool', toolCallId: message.toolCallId ?? '', content }
      : { role: 'user', content };
  const prefixHash = link(closed, item);
  return { prefixHash, chain: prefixHash, answerFrom: null };
}

/**
 * The state of an answer's message (an assistant message, or a note it joined) ending the answer so far: the answer's
 * texts from `answerFrom` (its assistant messages' and the notes it joined) chained from `base`, the chain before it.
 * `closes`: the answer was closed by the client's calls (`calls`), and ends here again.
 */
function answerState(input: {
  message: MessageRow;
  before: readonly { row: MessageRow; state: ChainState }[];
  names: ReadonlySet<string>;
  base: Uint8Array;
  answerFrom: number;
  calls: readonly { id: string; name: string }[];
  closes: boolean;
}): ChainState {
  const { message, before, names, base, answerFrom } = input;
  const parts = since(before, answerFrom)
    .filter(
      ({ row, state }) =>
        row.content !== '' &&
        !isHidden(row) &&
        (row.role === 'assistant' || (row.role === 'system' && state.prefixHash !== null)),
    )
    .map(({ row }) => row.content);
  if (message.content !== '') parts.push(message.content);
  const toolCalls = input.calls
    .filter((call) => names.has(call.name))
    .map((call) => ({ id: call.id, name: call.name, arguments: '' }));
  const prefixHash = link(base, { role: 'assistant', content: stored(parts.join('\n\n')), toolCalls });
  const closes = toolCalls.length > 0 || input.closes;
  const previousChain = before.at(-1)?.state.chain ?? START;
  return { prefixHash, chain: closes ? prefixHash : previousChain, answerFrom };
}

/**
 * A saved memory's note (client-view.ts, readAnswerNote): a line of the answer of its turn, the latest since the last
 * user message, while that answer is the last item (open, or closed by the client's calls); else not seen.
 */
function noteState(input: {
  message: MessageRow;
  before: readonly { row: MessageRow; state: ChainState }[];
  names: ReadonlySet<string>;
  previousChain: Uint8Array;
  previousFrom: number | null;
}): ChainState {
  const { message, before, previousChain, previousFrom } = input;
  const passThrough: ChainState = { prefixHash: null, chain: previousChain, answerFrom: previousFrom };
  const said = before.findLast(({ row }) => (row.role === 'user' || row.role === 'assistant') && !isHidden(row))?.row;
  if (said?.role !== 'assistant' || said.turnId !== message.turnId) return passThrough;
  if (previousFrom !== null)
    return answerState({ ...input, base: previousChain, answerFrom: previousFrom, calls: [], closes: false });
  // The answer the client's calls closed: the last item when no client tool's result came after it.
  const ender = before.findLast(({ state }) => state.prefixHash !== null);
  const answerFrom = ender?.state.answerFrom ?? null;
  if (!ender || (ender.row.role !== 'assistant' && ender.row.role !== 'system') || answerFrom === null)
    return passThrough;
  const base = before.findLast(({ row }) => (row.seq as number) < answerFrom)?.state.chain ?? START;
  return answerState({ ...input, base, answerFrom, calls: said.toolCalls ?? [], closes: true });
}
