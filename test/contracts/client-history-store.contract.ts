import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ToolCall } from '../../src/core/context/types';
import type { MessageStatus, TranscriptMessage } from '../../src/core/domain/types';
import type { ClientMessage, PrefixHit } from '../../src/core/ports';
import type { MakePortStores, PortStores } from './port-fixtures';
import { ENCODING, exchange, newThread, send } from './store-fixtures';

/** The thread's client tools (the /v1 client offered get_weather); calculator is one of ours. */
const CLIENT_TOOLS = [
  { type: 'function' as const, function: { name: 'get_weather', description: 'w', parameters: {} } },
];
const CALCULATOR: ToolCall = { id: 'calc_1', name: 'calculator', args: { expression: '2+2' } };
const WEATHER: ToolCall = { id: 'call_w1', name: 'get_weather', args: { city: 'Oslo' } };

const hex = (hash: Uint8Array | null | undefined) => (hash ? Buffer.from(hash).toString('hex') : null);
const user = (content: string): ClientMessage => ({ role: 'user', content });
const answer = (content: string, calls: ToolCall[] = []): ClientMessage => ({
  role: 'assistant',
  content,
  toolCalls: calls.map((call) => ({ id: call.id, name: call.name, arguments: JSON.stringify(call.args) })),
});
const result = (toolCallId: string, content: string): ClientMessage => ({ role: 'tool', toolCallId, content });

interface RunningTurn {
  threadId: string;
  turnId: string;
  owner: string;
  userMessage: TranscriptMessage | null;
}

/** Starts the thread's next turn as the runner does: a sent message (it takes its seq) or, with null, a follow-up. */
async function startTurn(stores: PortStores, threadId: string, content: string | null): Promise<RunningTurn> {
  if (content === null)
    await stores.turns.queueTurn({ threadId, kind: 'follow-up', userMessageId: null, maxQueued: 5 });
  else await send(stores, threadId, content);
  return startQueued(stores, threadId);
}

/** Starts the turn already queued (a regeneration). */
async function startQueued(stores: PortStores, threadId: string): Promise<RunningTurn> {
  const owner = `process-${randomUUID()}`;
  const started = await stores.turns.nextTurn({ threadId, owner, ttlMs: 30_000 });
  if (started.outcome !== 'started') throw new Error('no turn started');
  return { threadId, turnId: started.turn.id, owner, userMessage: started.userMessage };
}

/** A message the turn writes: appended streaming, then (unless `streaming`) finished, into the window when complete. */
async function write(
  stores: PortStores,
  turn: Pick<RunningTurn, 'threadId' | 'turnId'>,
  message: {
    role: 'assistant' | 'tool';
    content: string;
    toolCalls?: ToolCall[];
    toolCallId?: string;
    status?: MessageStatus;
  },
): Promise<TranscriptMessage> {
  const { role, content, toolCalls, toolCallId, status = 'complete' } = message;
  const started = await stores.turns.appendTurnMessage({
    threadId: turn.threadId,
    turnId: turn.turnId,
    role,
    content: '',
    status: 'streaming',
    ...(toolCallId ? { toolCallId } : {}),
  });
  if (status === 'streaming') {
    await stores.turns.saveStreamingText(started.id, content);
    return started;
  }
  const entry = { role, content, tokens: content.length, ...(toolCalls ? { toolCalls } : {}), toolCallId };
  return stores.turns.finishMessage({
    messageId: started.id,
    content,
    status,
    tokens: content.length,
    encoding: ENCODING,
    ...(toolCalls ? { toolCalls } : {}),
    ...(status === 'complete' ? { entry } : {}),
    ...(status === 'error' ? { error: { code: 'MODEL_ERROR', message: 'the model failed' } } : {}),
  });
}

/** A saved memory's note as the turn writes it after its tool round (answer-tool-calls.ts, announce): no context entry. */
async function note(stores: PortStores, turn: Pick<RunningTurn, 'threadId' | 'turnId'>, content: string) {
  const started = await stores.turns.appendTurnMessage({
    threadId: turn.threadId,
    turnId: turn.turnId,
    role: 'system',
    content: '',
    status: 'streaming',
  });
  return stores.turns.finishMessage({
    messageId: started.id,
    content,
    status: 'complete',
    tokens: 0,
    encoding: ENCODING,
  });
}

async function endTurn(stores: PortStores, turn: RunningTurn): Promise<void> {
  await stores.turns.completeTurn({ turnId: turn.turnId, threadId: turn.threadId, owner: turn.owner, ttlMs: 30_000 });
}

/** Ends a streaming message as complete (its context entry with it). */
async function finish(stores: PortStores, message: TranscriptMessage, content: string): Promise<void> {
  await stores.turns.finishMessage({
    messageId: message.id,
    content,
    status: 'complete',
    tokens: content.length,
    encoding: ENCODING,
    entry: { role: message.role, content, tokens: content.length, toolCallId: message.toolCallId ?? undefined },
  });
}

/**
 * A /v1 thread as the turn runner and the route write it (#1–#10): an exchange; an answer with a round of our
 * calculator (#4–#6); an answer calling the client's get_weather (#8), its result the client sent (#9), the follow-up
 * answer (#10). Returns the client's copy of it.
 */
async function toolThread(stores: PortStores) {
  const thread = await newThread(stores);
  await stores.conversations.setClientSettings({
    threadId: thread.id,
    settings: { instructions: null, tools: CLIENT_TOOLS },
  });
  await exchange(stores, thread.id, '  first question\r\n', 'first answer');
  const math = await startTurn(stores, thread.id, 'what is 2+2?');
  await write(stores, math, { role: 'assistant', content: 'Let me check', toolCalls: [CALCULATOR] });
  await write(stores, math, { role: 'tool', content: '4', toolCallId: CALCULATOR.id });
  await write(stores, math, { role: 'assistant', content: 'It is 4.' });
  await endTurn(stores, math);
  const weather = await startTurn(stores, thread.id, 'weather in Oslo?');
  await write(stores, weather, { role: 'assistant', content: '', toolCalls: [WEATHER] });
  await endTurn(stores, weather);
  await write(stores, weather, { role: 'tool', content: 'rain', toolCallId: WEATHER.id });
  const followUp = await startTurn(stores, thread.id, null);
  await write(stores, followUp, { role: 'assistant', content: 'It rains in Oslo.' });
  await endTurn(stores, followUp);
  const history = [
    user('first question'),
    answer('first answer'),
    user('what is 2+2?'),
    answer('Let me check\n\nIt is 4.'),
    user('weather in Oslo?'),
    answer('', [WEATHER]),
    result(WEATHER.id, 'rain'),
    answer('It rains in Oslo.'),
  ];
  return { thread, history };
}

/** A thread of `count` exchanges "question i" / "answer i" (#1–#2·count), and the client's copy of it. */
async function chat(stores: PortStores, count: number, options: { ownerId?: string } = {}) {
  const thread = await newThread(stores, options);
  const exchanges = [];
  const history: ClientMessage[] = [];
  for (let index = 1; index <= count; index += 1) {
    exchanges.push(await exchange(stores, thread.id, `question ${index}`, `answer ${index}`));
    history.push(user(`question ${index}`), answer(`answer ${index}`));
  }
  return { thread, exchanges, history };
}

/** The seq a history's hashes are found at in the whole thread (null: none). */
async function foundAt(stores: PortStores, threadId: string, history: readonly ClientMessage[]) {
  const hashes = stores.clientHistory.chainHashes({ messages: history, from: 0, base: null });
  const hit = await stores.clientHistory.findPrefix({ threadId, hashes, afterSeq: 0, throughSeq: 1_000 });
  return hit?.seq ?? null;
}

/** The rows' seqs, roles, whether each has a prefix hash, and their answerFrom. */
async function chainOf(stores: PortStores, threadId: string) {
  const rows = await stores.clientHistory.readRows({ threadId, fromSeq: 1, throughSeq: 1_000, limit: 100 });
  return rows.map((row) => [row.message.seq, row.message.role, row.prefixHash !== null, row.answerFrom]);
}

/**
 * The ClientHistoryStore contract (the /v1 route's history matching): the chain hashes of a thread's client view as
 * the turn and the route write its messages, found by the hashes of the client's copy of the thread.
 */
export function describeClientHistoryStoreContract(name: string, make: MakePortStores): void {
  describe(`ClientHistoryStore contract: ${name}`, () => {
    it("finds each item of a client's history at the message that ends it: answers with tool rounds, client calls, results", async () => {
      const stores = make();
      const { thread, history } = await toolThread(stores);
      const hashes = stores.clientHistory.chainHashes({ messages: history, from: 0, base: null });
      const hits: (PrefixHit | null)[] = [];
      for (const hash of hashes)
        hits.push(
          await stores.clientHistory.findPrefix({ threadId: thread.id, hashes: [hash], afterSeq: 0, throughSeq: 10 }),
        );
      expect(hits.map((hit) => hit && [hit.seq, hit.role, hit.answerFrom])).toEqual([
        [1, 'user', null],
        [2, 'assistant', 2],
        [3, 'user', null],
        [6, 'assistant', 4],
        [7, 'user', null],
        [8, 'assistant', 8],
        [9, 'tool', null],
        [10, 'assistant', 10],
      ]);
      expect(hits.map((hit) => hex(hit?.prefixHash))).toEqual(hashes.map(hex));
      // Every hash at once: the latest.
      expect(
        await stores.clientHistory.findPrefix({ threadId: thread.id, hashes, afterSeq: 0, throughSeq: 10 }),
      ).toMatchObject({ seq: 10, role: 'assistant', answerFrom: 10 });
      // The answer's first part, as a client that kept only it holds it; an answer of other words parts there.
      expect(await foundAt(stores, thread.id, [...history.slice(0, 3), answer('Let me check')])).toBe(4);
      expect(
        await foundAt(stores, thread.id, [...history.slice(0, 3), answer('It is four.'), ...history.slice(4)]),
      ).toBe(3);
      // The server tool's result is inside its answer: no hash of its own, the answer's start.
      expect(await chainOf(stores, thread.id)).toEqual([
        [1, 'user', true, null],
        [2, 'assistant', true, 2],
        [3, 'user', true, null],
        [4, 'assistant', true, 4],
        [5, 'tool', false, 4],
        [6, 'assistant', true, 4],
        [7, 'user', true, null],
        [8, 'assistant', true, 8],
        [9, 'tool', true, null],
        [10, 'assistant', true, 10],
      ]);
    });

    it("finds an answer with a saved memory's note at its last message, the note a line of it as the client got it", async () => {
      const stores = make();
      const { thread, history } = await chat(stores, 1);
      await stores.conversations.setClientSettings({
        threadId: thread.id,
        settings: { instructions: null, tools: CLIENT_TOOLS },
      });
      const saved = '[memory] Saved to your memories: "I am vegetarian."';
      const save: ToolCall = { id: 'save_1', name: 'save_memory', args: { text: 'I am vegetarian.' } };
      const remember = await startTurn(stores, thread.id, 'Remember: I am vegetarian.');
      await write(stores, remember, { role: 'assistant', content: '', toolCalls: [save] });
      await write(stores, remember, { role: 'tool', content: 'saved', toolCallId: save.id });
      await note(stores, remember, saved);
      await write(stores, remember, { role: 'assistant', content: 'Noted.' });
      await endTurn(stores, remember);
      // A round that saves a memory and calls the client's tool: the note is a line of the answer handed back.
      const weather = await startTurn(stores, thread.id, 'Remember: I live in Oslo. Weather?');
      const oslo: ToolCall = { ...save, id: 'save_2', args: { text: 'I live in Oslo.' } };
      await write(stores, weather, { role: 'assistant', content: 'Checking.', toolCalls: [oslo, WEATHER] });
      await write(stores, weather, { role: 'tool', content: 'saved', toolCallId: oslo.id });
      await note(stores, weather, '[memory] Saved to your memories: "I live in Oslo."');
      await endTurn(stores, weather);
      await write(stores, weather, { role: 'tool', content: 'rain', toolCallId: WEATHER.id });
      const followUp = await startTurn(stores, thread.id, null);
      await write(stores, followUp, { role: 'assistant', content: 'It rains.' });
      await endTurn(stores, followUp);
      const asked = [...history, user('Remember: I am vegetarian.')];
      const noted = [...asked, answer(`${saved}\n\nNoted.`)];
      const called = [
        ...noted,
        user('Remember: I live in Oslo. Weather?'),
        answer('Checking.\n\n[memory] Saved to your memories: "I live in Oslo."', [WEATHER]),
      ];
      expect(await foundAt(stores, thread.id, noted)).toBe(7);
      expect(await foundAt(stores, thread.id, [...noted, user('Remember: I live in Oslo. Weather?')])).toBe(8);
      expect(await foundAt(stores, thread.id, called)).toBe(11);
      expect(await foundAt(stores, thread.id, [...called, result(WEATHER.id, 'rain')])).toBe(12);
      expect(await foundAt(stores, thread.id, [...called, result(WEATHER.id, 'rain'), answer('It rains.')])).toBe(13);
      // The answer as it was before its note: its first part's hash; without the note, the history parts there.
      expect(await foundAt(stores, thread.id, [...asked, answer('Noted.'), user('next')])).toBe(3);
      const hit = await stores.clientHistory.findPrefix({
        threadId: thread.id,
        hashes: stores.clientHistory.chainHashes({ messages: noted, from: 0, base: null }).slice(-1),
        afterSeq: 0,
        throughSeq: 100,
      });
      expect(hit).toMatchObject({ seq: 7, role: 'assistant', answerFrom: 4 });
    });

    it("chains from a stored message's hash as from the history's start", async () => {
      const stores = make();
      const { thread, history } = await toolThread(stores);
      const { clientHistory } = stores;
      const whole = clientHistory.chainHashes({ messages: history, from: 0, base: null }).map(hex);
      for (let from = 1; from < history.length; from += 1) {
        const base = clientHistory.chainHashes({ messages: history.slice(0, from), from: 0, base: null }).at(-1);
        expect(clientHistory.chainHashes({ messages: history, from, base: base ?? null }).map(hex)).toEqual(
          whole.slice(from),
        );
      }
      // The route goes on from the stored chain through an item (here the user message #7: history item 4).
      const [stored] = await clientHistory.readRows({ threadId: thread.id, fromSeq: 7, throughSeq: 7, limit: 1 });
      expect(
        clientHistory.chainHashes({ messages: history, from: 5, base: stored?.prefixHash ?? null }).map(hex),
      ).toEqual(whole.slice(5));
      // Line endings and surrounding white space do not count, nor the calls' arguments; other words and ids do.
      const same = [user('\tfirst question \r\n'), answer('first answer\n'), user('what is 2+2?')];
      expect(clientHistory.chainHashes({ messages: same, from: 0, base: null }).map(hex)).toEqual(whole.slice(0, 3));
      const fifth = (call: ToolCall) =>
        hex(
          clientHistory.chainHashes({ messages: [...history.slice(0, 5), answer('', [call])], from: 0, base: null })[5],
        );
      expect(fifth({ ...WEATHER, args: { unit: 'C', city: 'Oslo' } })).toBe(whole[5]);
      expect(fifth({ ...WEATHER, id: 'call_other' })).not.toBe(whole[5]);
      expect(hex(clientHistory.chainHashes({ messages: [user('first  question')], from: 0, base: null })[0])).not.toBe(
        whole[0],
      );
    });

    it('hashes a lone surrogate as stored, U+FFFD: the text the client got back matches, the ill-formed one does not', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await exchange(stores, thread.id, 'broken \uD800 text', 'fine');
      expect(await foundAt(stores, thread.id, [user('broken \uFFFD text'), answer('fine')])).toBe(2);
      expect(await foundAt(stores, thread.id, [user('broken \uD800 text'), answer('fine')])).toBeNull();
    });

    it('gives no hash to a message still streaming, nor to any after it, until it ends', async () => {
      const stores = make();
      const { thread, history } = await chat(stores, 1);
      const turn = await startTurn(stores, thread.id, 'tell a story');
      const streaming = await write(stores, turn, { role: 'assistant', content: 'Once upon', status: 'streaming' });
      const asked = [...history, user('tell a story')];
      expect(await foundAt(stores, thread.id, asked)).toBe(3);
      expect(await foundAt(stores, thread.id, [...asked, answer('Once upon')])).toBe(3);
      expect((await chainOf(stores, thread.id)).at(-1)).toEqual([4, 'assistant', false, null]);
      await finish(stores, streaming, 'Once upon a time.');
      expect(await foundAt(stores, thread.id, [...asked, answer('Once upon a time.')])).toBe(4);
      await endTurn(stores, turn);
      // Two results of the client's tools: the second, ended first, waits for the first.
      await stores.conversations.setClientSettings({
        threadId: thread.id,
        settings: { instructions: null, tools: CLIENT_TOOLS },
      });
      const second = { ...WEATHER, id: 'call_w2', args: { city: 'Rome' } };
      const weather = await startTurn(stores, thread.id, 'weather in Oslo and Rome?');
      await write(stores, weather, { role: 'assistant', content: '', toolCalls: [WEATHER, second] });
      await endTurn(stores, weather);
      const first = await write(stores, weather, {
        role: 'tool',
        content: '',
        toolCallId: WEATHER.id,
        status: 'streaming',
      });
      await write(stores, weather, { role: 'tool', content: 'sun', toolCallId: second.id });
      expect((await chainOf(stores, thread.id)).slice(-2)).toEqual([
        [7, 'tool', false, null],
        [8, 'tool', false, null],
      ]);
      await finish(stores, first, 'rain');
      const called = [
        ...asked,
        answer('Once upon a time.'),
        user('weather in Oslo and Rome?'),
        answer('', [WEATHER, second]),
      ];
      expect(await foundAt(stores, thread.id, [...called, result(WEATHER.id, 'rain')])).toBe(7);
      expect(await foundAt(stores, thread.id, [...called, result(WEATHER.id, 'rain'), result(second.id, 'sun')])).toBe(
        8,
      );
    });

    it('leaves out what a client never saw: forgotten, superseded, failed and unstarted answers', async () => {
      const stores = make();
      const { thread, exchanges, history } = await chat(stores, 3);
      const [, forgotten] = exchanges;
      await stores.memory.forget({
        threadId: thread.id,
        messageIds: [forgotten?.user.id ?? '', forgotten?.answer.id ?? ''],
      });
      const kept = [...history.slice(0, 2), ...history.slice(4)];
      expect(await foundAt(stores, thread.id, kept)).toBe(6);
      expect(await foundAt(stores, thread.id, kept.slice(0, 3))).toBe(5);
      // A history kept from before the forget parts where it was.
      expect(await foundAt(stores, thread.id, history)).toBe(2);
      // Hidden, they carry the start of the answer still open before them (#2's: only a user message closes it).
      expect((await chainOf(stores, thread.id)).slice(2, 4)).toEqual([
        [3, 'user', false, 2],
        [4, 'assistant', false, 2],
      ]);
      // An answer that failed, one stopped before its first word: not seen. One stopped with words: seen as stored.
      for (const [question, status, text] of [
        ['question 4', 'error', ''],
        ['question 5', 'cancelled', ''],
        ['question 6', 'cancelled', 'Half an'],
      ] as const) {
        const turn = await startTurn(stores, thread.id, question);
        await write(stores, turn, { role: 'assistant', content: text, status });
        await endTurn(stores, turn);
      }
      const later = [...kept, user('question 4'), user('question 5'), user('question 6')];
      expect(await foundAt(stores, thread.id, later)).toBe(11);
      expect(await foundAt(stores, thread.id, [...later, answer('Half an')])).toBe(12);
      // A regenerated answer takes the place of the one it supersedes.
      const regenerated = await exchange(stores, thread.id, 'question 7', 'old answer');
      await stores.memory.queueRegenerate({ threadId: thread.id, userMessageId: regenerated.user.id });
      const again = await startQueued(stores, thread.id);
      await write(stores, again, { role: 'assistant', content: 'new answer' });
      await endTurn(stores, again);
      const asked = [...later, answer('Half an'), user('question 7')];
      expect(await foundAt(stores, thread.id, [...asked, answer('new answer')])).toBe(15);
      expect(await foundAt(stores, thread.id, [...asked, answer('old answer')])).toBe(13);
    });

    it("re-chains an answer's later parts, and what follows, when a middle part of it is forgotten", async () => {
      const stores = make();
      const { thread, history } = await chat(stores, 1);
      const again: ToolCall = { ...CALCULATOR, id: 'calc_2', args: { expression: '4+4' } };
      const math = await startTurn(stores, thread.id, 'what is 2+2+4?');
      await write(stores, math, { role: 'assistant', content: 'First 2+2.', toolCalls: [CALCULATOR] });
      await write(stores, math, { role: 'tool', content: '4', toolCallId: CALCULATOR.id });
      const middle = await write(stores, math, { role: 'assistant', content: 'Then 4+4.', toolCalls: [again] });
      await write(stores, math, { role: 'tool', content: '8', toolCallId: again.id });
      await write(stores, math, { role: 'assistant', content: 'It is 8.' });
      await endTurn(stores, math);
      await exchange(stores, thread.id, 'thanks', 'welcome');
      const asked = [...history, user('what is 2+2+4?')];
      const after = [user('thanks'), answer('welcome')];
      expect(
        await foundAt(stores, thread.id, [...asked, answer('First 2+2.\n\nThen 4+4.\n\nIt is 8.'), ...after]),
      ).toBe(10);
      await stores.memory.forget({ threadId: thread.id, messageIds: [middle.id] });
      const kept = [...asked, answer('First 2+2.\n\nIt is 8.')];
      expect(await foundAt(stores, thread.id, kept)).toBe(8);
      expect(await foundAt(stores, thread.id, [...kept, ...after])).toBe(10);
      // A history kept from before the forget parts at the answer's first part.
      expect(
        await foundAt(stores, thread.id, [...asked, answer('First 2+2.\n\nThen 4+4.\n\nIt is 8.'), ...after]),
      ).toBe(3);
    });

    it("finds only the thread's own messages, within (afterSeq, throughSeq], the greatest seq when several match", async () => {
      const stores = make();
      const mine = await chat(stores, 2);
      const stranger = await chat(stores, 4); // another user's thread: its first four messages hash as mine
      const hashes = stores.clientHistory.chainHashes({ messages: stranger.history, from: 0, base: null });
      const find = (threadId: string, afterSeq: number, throughSeq: number, some = hashes) =>
        stores.clientHistory
          .findPrefix({ threadId, hashes: some, afterSeq, throughSeq })
          .then((hit) => hit?.seq ?? null);
      expect(await find(mine.thread.id, 0, 100)).toBe(4);
      expect(await find(stranger.thread.id, 0, 100)).toBe(8);
      expect(await find(randomUUID(), 0, 100)).toBeNull();
      // The bounds: after afterSeq, through throughSeq.
      expect(await find(stranger.thread.id, 0, 5)).toBe(5);
      expect(await find(stranger.thread.id, 4, 5)).toBe(5);
      expect(await find(stranger.thread.id, 5, 5)).toBeNull();
      expect(await find(stranger.thread.id, 7, 8)).toBe(8);
      expect(await find(stranger.thread.id, 8, 100)).toBeNull();
      expect(await find(stranger.thread.id, 0, 100, hashes.slice(0, 1))).toBe(1);
      expect(await find(stranger.thread.id, 1, 100, hashes.slice(0, 1))).toBeNull();
      expect(await find(stranger.thread.id, 0, 100, [])).toBeNull();
      // An answer whose last round added no text: its first part and its last hash alike; the later one is found.
      const thread = await newThread(stores);
      const turn = await startTurn(stores, thread.id, 'what is 2+2?');
      await write(stores, turn, { role: 'assistant', content: 'It is 4.', toolCalls: [CALCULATOR] });
      await write(stores, turn, { role: 'tool', content: '4', toolCallId: CALCULATOR.id });
      await write(stores, turn, { role: 'assistant', content: '' });
      await endTurn(stores, turn);
      const client = [user('what is 2+2?'), answer('It is 4.')];
      const last = stores.clientHistory.chainHashes({ messages: client, from: 0, base: null }).slice(-1);
      expect(
        await stores.clientHistory.findPrefix({ threadId: thread.id, hashes: last, afterSeq: 0, throughSeq: 4 }),
      ).toMatchObject({ seq: 4, role: 'assistant', answerFrom: 2 });
      expect(await find(thread.id, 0, 3, last)).toBe(2);
    });

    it('reads the rows of a seq range in seq order, at most `limit`, with the messages as the transcript holds them', async () => {
      const stores = make();
      const { thread } = await chat(stores, 3);
      await chat(stores, 3, { ownerId: thread.ownerId });
      await send(stores, thread.id, 'queued'); // no seq yet: no row of any range
      const read = (fromSeq: number, throughSeq: number, limit: number) =>
        stores.clientHistory
          .readRows({ threadId: thread.id, fromSeq, throughSeq, limit })
          .then((rows) => rows.map((row) => row.message.seq));
      expect(await read(2, 5, 10)).toEqual([2, 3, 4, 5]);
      expect(await read(2, 5, 2)).toEqual([2, 3]);
      expect(await read(5, 100, 10)).toEqual([5, 6]);
      expect(await read(7, 100, 10)).toEqual([]);
      expect(await read(4, 3, 10)).toEqual([]);
      const rows = await stores.clientHistory.readRows({ threadId: thread.id, fromSeq: 1, throughSeq: 6, limit: 10 });
      const listed = await stores.memory.listMessagesBySeq({ threadId: thread.id, fromSeq: 1, throughSeq: 6 });
      expect(rows.map((row) => row.message)).toEqual(listed);
    });

    it('says a message a client sees is being written while an answer or a client tool result streams', async () => {
      const stores = make();
      const { thread } = await chat(stores, 1);
      await stores.conversations.setClientSettings({
        threadId: thread.id,
        settings: { instructions: null, tools: CLIENT_TOOLS },
      });
      expect(await stores.clientHistory.writing(thread.id)).toBe(false);
      const turn = await startTurn(stores, thread.id, 'what is 2+2?');
      await send(stores, thread.id, 'queued meanwhile');
      expect(await stores.clientHistory.writing(thread.id)).toBe(false);
      const streaming = await write(stores, turn, { role: 'assistant', content: 'Let', status: 'streaming' });
      expect(await stores.clientHistory.writing(thread.id)).toBe(true);
      expect(await stores.clientHistory.writing(randomUUID())).toBe(false);
      await stores.turns.finishMessage({
        messageId: streaming.id,
        content: 'Let me check',
        status: 'complete',
        toolCalls: [CALCULATOR, WEATHER],
        tokens: 3,
        encoding: ENCODING,
      });
      expect(await stores.clientHistory.writing(thread.id)).toBe(false);
      // Our tool's result: not the client's to see. The client's tool's result: seen.
      const ours = await write(stores, turn, {
        role: 'tool',
        content: '',
        toolCallId: CALCULATOR.id,
        status: 'streaming',
      });
      expect(await stores.clientHistory.writing(thread.id)).toBe(false);
      await finish(stores, ours, '4');
      const theirs = await write(stores, turn, {
        role: 'tool',
        content: '',
        toolCallId: WEATHER.id,
        status: 'streaming',
      });
      expect(await stores.clientHistory.writing(thread.id)).toBe(true);
      await finish(stores, theirs, 'rain');
      expect(await stores.clientHistory.writing(thread.id)).toBe(false);
    });

    it('says whether a user message a client sees has a seq in (afterSeq, throughSeq]', async () => {
      const stores = make();
      const { thread, exchanges } = await chat(stores, 3);
      const after = (afterSeq: number, throughSeq: number) =>
        stores.clientHistory.userAfter({ threadId: thread.id, afterSeq, throughSeq });
      expect(await after(0, 6)).toBe(true);
      expect(await after(0, 1)).toBe(true);
      expect(await after(1, 2)).toBe(false);
      expect(await after(2, 3)).toBe(true);
      expect(await after(3, 4)).toBe(false);
      expect(await after(3, 6)).toBe(true);
      expect(await after(5, 6)).toBe(false);
      await stores.memory.forget({ threadId: thread.id, messageIds: [exchanges[2]?.user.id ?? ''] });
      expect(await after(3, 6)).toBe(false);
      await send(stores, thread.id, 'queued');
      expect(await after(3, 100)).toBe(false);
      expect(await stores.clientHistory.userAfter({ threadId: randomUUID(), afterSeq: 0, throughSeq: 6 })).toBe(false);
    });
  });
}
