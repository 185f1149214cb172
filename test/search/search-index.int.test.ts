import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { useChatServer } from '../support/chat-server';
import { lastUserText, replyWithText, replyWithToolCalls, type StubRequest } from '../support/openai-stub';
import type { TestApp } from '../support/test-app';
import { reindexSearch } from '../../src/db/search-settings';
import { query } from '../memory/memory-test-kit';
import {
  classifyRequest,
  lastMessage,
  responder,
  textOf,
  threadHelpers,
  type ThreadHelpers,
} from '../tools/tool-test-kit';

/** The scripted model: "search: words" calls search_transcript; with its result it answers "Found: <result>". */
function chat(request: StubRequest) {
  const last = lastMessage(request);
  if (last?.role === 'tool') return replyWithText(`Found: ${textOf(last)}`);
  const user = lastUserText(request.body);
  const asked = /^search: (.*)$/.exec(user);
  if (asked) return replyWithToolCalls([{ name: 'search_transcript', arguments: { query: asked[1], limit: 5 } }]);
  return replyWithText(`Noted: ${user}`);
}

describe('the transcript search index and the search_transcript tool', () => {
  const server = useChatServer({ stub: { classifyRequest, responder: responder(chat) } });
  let helpers: ThreadHelpers;
  const search = () => server.app.application.deps.search;

  beforeAll(async () => {
    helpers = await threadHelpers(server.app);
  });
  beforeEach(() => server.stub.reset());

  it('indexes a message when it completes, with stemming, and never an unfinished one', async () => {
    const thread = await helpers.newThread();
    await helpers.send(thread.id, 'We are budgeting 4000 euros for the Lisbon trip.');
    const found = await search().searchForModel({ threadId: thread.id, query: 'what budget for lisbon?', limit: 5 });
    expect(found.map((match) => [match.seq, match.role])).toEqual(
      expect.arrayContaining([
        [1, 'user'],
        [2, 'assistant'],
      ]),
    );
    expect(found[0]?.content).toContain('Lisbon');

    // A streaming message has no vector; completing it indexes it (the trigger of the search_index migration).
    await query(
      server.app,
      `INSERT INTO messages (id, thread_id, seq, role, content, status) VALUES (gen_random_uuid(), $1, 3, 'assistant', 'the zeppelin is streaming', 'streaming')`,
      [thread.id],
    );
    await query(server.app, 'UPDATE threads SET last_seq = 3 WHERE id = $1', [thread.id]);
    const [streaming] = await query<{ indexed: boolean }>(
      server.app,
      'SELECT search_vector IS NOT NULL AS indexed FROM messages WHERE thread_id = $1 AND seq = 3',
      [thread.id],
    );
    expect(streaming?.indexed).toBe(false);
    expect(await search().searchForModel({ threadId: thread.id, query: 'zeppelin', limit: 5 })).toEqual([]);
    await query(
      server.app,
      `UPDATE messages SET content = 'the zeppelin has landed', status = 'complete' WHERE thread_id = $1 AND seq = 3`,
      [thread.id],
    );
    expect(
      (await search().searchForModel({ threadId: thread.id, query: 'zeppelins', limit: 5 })).map((match) => match.seq),
    ).toEqual([3]);
    // Errored and cancelled messages are never returned.
    await query(server.app, `UPDATE messages SET status = 'error' WHERE thread_id = $1 AND seq = 3`, [thread.id]);
    expect(await search().searchForModel({ threadId: thread.id, query: 'zeppelin', limit: 5 })).toEqual([]);
  });

  it('indexes a bounded prefix of a 2 MB tool result, and a copied row keeps its vector', async () => {
    const thread = await helpers.newThread();
    const huge = `The import report of ORD-7731: ${'rows and rows of numbers 12345 '.repeat(70_000)} the end.`;
    expect(huge.length).toBeGreaterThan(2_000_000);
    await query(
      server.app,
      `INSERT INTO messages (id, thread_id, seq, role, content, status, tool_call_id) VALUES (gen_random_uuid(), $1, 1, 'tool', $2, 'complete', 'call-1')`,
      [thread.id, huge],
    );
    await query(server.app, 'UPDATE threads SET last_seq = 1 WHERE id = $1', [thread.id]);
    const found = await search().searchForModel({ threadId: thread.id, query: 'import report ORD-7731', limit: 3 });
    expect(found.map((match) => [match.seq, match.role])).toEqual([[1, 'tool']]);

    const copy = await helpers.newThread();
    await query(
      server.app,
      `INSERT INTO messages (id, thread_id, seq, role, content, status, tool_call_id, search_vector)
      SELECT gen_random_uuid(), $2, seq, role, content, status, tool_call_id, search_vector FROM messages WHERE thread_id = $1`,
      [thread.id, copy.id],
    );
    const [same] = await query<{ same: boolean }>(
      server.app,
      `SELECT (SELECT search_vector FROM messages WHERE thread_id = $1) = (SELECT search_vector FROM messages WHERE thread_id = $2) AS same`,
      [thread.id, copy.id],
    );
    expect(same?.same).toBe(true);
  });

  it('the model finds what the conversation said through search_transcript, only in its own thread when its recall scope is the thread', async () => {
    const thread = await helpers.newThread();
    // The default scope (RECALL_SCOPE=user) also searches the user's other chats: test/search/cross-thread-recall.
    const scoped = await server.app.api(`/api/threads/${thread.id}/settings`, {
      method: 'PATCH',
      token: helpers.token,
      json: { recallScope: 'thread' },
    });
    expect(scoped.status).toBe(200);
    const other = await helpers.newThread();
    await helpers.send(other.id, 'My gate code for the warehouse is 9191.');
    await helpers.send(thread.id, 'The warehouse alarm code is 4455, write it down.');
    await helpers.send(thread.id, 'Unrelated: the weather is nice.');
    const result = await helpers.send(thread.id, 'search: warehouse code');
    expect(result.messages.map((message) => message.role)).toEqual(['assistant', 'tool', 'assistant']);
    const tool = result.messages[1]?.content ?? '';
    expect(tool).toMatch(/^\d+ message\(s\) of this conversation matching "warehouse code"/);
    expect(tool).toMatch(/#1 · user · \d{4}-\d\d-\d\d \d\d:\d\d: The warehouse alarm code is 4455/);
    expect(tool).not.toContain('9191');
    expect(result.messages[2]?.content).toContain('4455');
    // The result was bounded by TOOL_RESULT_INLINE_TOKENS, so it entered the context as it is.
    const second = server.stub.requests.filter((request) => request.kind === 'chat').at(-1);
    expect(textOf(second?.body.messages.at(-1))).toBe(tool);
  });

  it('never returns forgotten messages, superseded answers, or anything before the context start to the model', async () => {
    const thread = await helpers.newThread();
    const forgotten = await helpers.send(thread.id, 'My locker code is LOCKER-5150.');
    await helpers.send(thread.id, 'My bike lock code is BIKE-2112.');
    expect(
      (await search().searchForModel({ threadId: thread.id, query: 'LOCKER-5150', limit: 5 })).length,
    ).toBeGreaterThan(0);
    expect(
      (
        await server.app.api(`/api/threads/${thread.id}/messages/${forgotten.userMessage.id}`, {
          method: 'DELETE',
          token: helpers.token,
        })
      ).status,
    ).toBe(200);
    expect(await search().searchForModel({ threadId: thread.id, query: 'LOCKER-5150 locker', limit: 5 })).toEqual([]);
    const [tombstone] = await query<{ indexed: boolean }>(
      server.app,
      'SELECT search_vector IS NOT NULL AS indexed FROM messages WHERE id = $1',
      [forgotten.userMessage.id],
    );
    expect(tombstone?.indexed).toBe(false);

    // Regenerate: the replaced answer is superseded and no longer found.
    const before = await helpers.messages(thread.id);
    const replaced = before.filter((message) => message.role === 'assistant').at(-1);
    expect(
      (await server.app.api(`/api/threads/${thread.id}/regenerate`, { method: 'POST', token: helpers.token })).status,
    ).toBeLessThan(300);
    await waitForSuperseded(server.app, replaced?.id ?? '');
    const bike = await search().searchForModel({ threadId: thread.id, query: 'bike lock', limit: 10 });
    expect(bike.map((match) => match.messageId)).not.toContain(replaced?.id);

    // A fresh context: earlier messages are not searchable for the model.
    expect(
      (await server.app.api(`/api/threads/${thread.id}/context-reset`, { method: 'POST', token: helpers.token }))
        .status,
    ).toBe(201);
    await helpers.send(thread.id, 'A new topic: gardening tomatoes.');
    expect(await search().searchForModel({ threadId: thread.id, query: 'bike lock BIKE-2112', limit: 5 })).toEqual([]);
    expect(
      (await search().searchForModel({ threadId: thread.id, query: 'tomatoes', limit: 5 })).length,
    ).toBeGreaterThan(0);
  });

  it('ranks a turn by the exchange around it and query words said close together (bench:recall rules)', async () => {
    const thread = await helpers.newThread();
    const texts = [
      'Did you ever find a new hobby after moving?', // 1: the question that says "hobby"
      'I signed up for pottery classes at the community centre.', // 2: its answer, found through it
      'The weather was grey all week.',
      'My yoga classes at the gym were cancelled again, so annoying.', // 4: "classes" alone, no exchange around it
      'We ordered pizza on Friday.',
      'Traffic was terrible this morning.',
      'My neighbour painted his fence.',
      'The car park was full, the roof of the building blue and old.', // 8: "blue" and "car" far apart, a shorter message
      'The library opens late on Sundays.',
      'The cafe changed its menu.',
      'We saw a blue car speeding on the highway yesterday evening near us.', // 11: "blue car" as a phrase
    ];
    await query(
      server.app,
      `INSERT INTO messages (id, thread_id, seq, role, content, status)
      SELECT gen_random_uuid(), $1, n, CASE WHEN n % 2 = 1 THEN 'user' ELSE 'assistant' END, t, 'complete' FROM unnest($2::text[]) WITH ORDINALITY AS x(t, n)`,
      [thread.id, texts],
    );
    await query(server.app, 'UPDATE threads SET last_seq = $2 WHERE id = $1', [thread.id, texts.length]);
    const seqs = async (text: string) =>
      (await search().searchForModel({ threadId: thread.id, query: text, limit: 5 })).map((match) => match.seq);
    const classes = await seqs('which classes for the new hobby?');
    expect(classes.indexOf(2)).toBeGreaterThanOrEqual(0);
    expect(classes.indexOf(2)).toBeLessThan(classes.indexOf(4));
    expect((await seqs('the blue car'))[0]).toBe(11);
    expect((await seqs('the car that is blue'))[0]).toBe(11);

    // The ranking is a prepared statement: Postgres plans its first executions for their values, then may keep one
    // generic plan. The same search asked again and again (and its beforeSeq form in between) ranks the same.
    const first = await search().searchForModel({
      threadId: thread.id,
      query: 'which classes for the new hobby?',
      limit: 5,
    });
    for (let repeat = 0; repeat < 12; repeat += 1) {
      expect(
        await search().searchForModel({ threadId: thread.id, query: 'which classes for the new hobby?', limit: 5 }),
      ).toEqual(first);
      expect(
        (await search().searchForModel({ threadId: thread.id, query: 'blue car', limit: 5, beforeSeq: 11 })).map(
          (match) => match.seq,
        ),
      ).not.toContain(11);
    }
  });

  it('npm run search:reindex rebuilds the index with another language (here: simple, no stemming)', async () => {
    const thread = await helpers.newThread();
    await helpers.send(thread.id, 'The gardeners were planting tulips.');
    const log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
    expect(
      (await search().searchForModel({ threadId: thread.id, query: 'planted tulip', limit: 5 })).length,
    ).toBeGreaterThan(0);
    try {
      expect(await reindexSearch(server.app.application.db, 'simple', log)).toBeGreaterThan(0);
      expect(await search().searchForModel({ threadId: thread.id, query: 'planted tulip', limit: 5 })).toEqual([]);
      expect(
        (await search().searchForModel({ threadId: thread.id, query: 'planting tulips', limit: 5 })).length,
      ).toBeGreaterThan(0);
    } finally {
      await reindexSearch(server.app.application.db, 'english', log);
    }
    expect(
      (await search().searchForModel({ threadId: thread.id, query: 'planted tulip', limit: 5 })).length,
    ).toBeGreaterThan(0);
  });
});

async function waitForSuperseded(app: TestApp, messageId: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const [row] = await query<{ superseded: boolean }>(app, 'SELECT superseded FROM messages WHERE id = $1', [
      messageId,
    ]);
    const [busy] = await query<{ n: number }>(
      app,
      `SELECT count(*)::int AS n FROM turns WHERE status IN ('queued', 'running')`,
    );
    if (row?.superseded && busy?.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the answer was not superseded');
}
