import { describe, expect, it } from 'vitest';
import type {
  RegenerateResponseDto,
  SearchHitDto,
  SearchPageDto,
  SendMessageResponseDto,
  ThreadDto,
} from '../../src/shared/api';
import { query } from '../memory/memory-test-kit';
import { useChatServer } from '../support/chat-server';
import { lastUserText, replyWithText } from '../support/openai-stub';
import { classifyRequest, responder } from '../tools/tool-test-kit';

/** The words of a hit's snippet that the server marked as matches. */
const marked = (hit: SearchHitDto) =>
  hit.highlights.map(({ start, end }) => hit.snippet.slice(start, end).toLowerCase());

describe('GET /api/search and GET /api/threads/:id/search', () => {
  let replies = 0;
  // Each answer repeats the user's words under a new number, so a regenerated answer differs from the one it replaces.
  const server = useChatServer({
    stub: {
      classifyRequest,
      responder: responder((request) => replyWithText(`Reply ${++replies}: ${lastUserText(request.body)}`)),
    },
  });

  async function user() {
    const { token } = await server.guest();
    const newThread = async (title: string) =>
      (await (await server.app.api('/api/threads', { method: 'POST', token, json: { title } })).json()) as ThreadDto;
    const send = async (threadId: string, content: string) => {
      const response = await server.app.api(`/api/threads/${threadId}/messages`, {
        method: 'POST',
        token,
        json: { content },
      });
      expect(response.status).toBe(201);
      return (await response.json()) as SendMessageResponseDto;
    };
    const search = async (path: string) => {
      const response = await server.app.api(path, { token });
      expect(response.status, await response.clone().text()).toBe(200);
      return (await response.json()) as SearchPageDto;
    };
    return { token, newThread, send, search };
  }

  it("finds words across all of the caller's threads, with thread titles and highlighted snippets, never another user's", async () => {
    const alice = await user();
    const bob = await user();
    const trip = await alice.newThread('Trip planning');
    const garden = await alice.newThread('Garden');
    const bobs = await bob.newThread('Bob secrets');
    await alice.send(trip.id, 'We are budgeting 4000 euros for the Lisbon trip in May.');
    await alice.send(garden.id, 'The tulips need water; Lisbon has a botanical garden too.');
    await alice.send(garden.id, 'Unrelated: the compost heap is warm.');
    await bob.send(bobs.id, 'My Lisbon apartment code is 7788.');

    const page = await alice.search('/api/search?q=lisbon');
    expect(new Set(page.hits.map((hit) => hit.threadId))).toEqual(new Set([trip.id, garden.id]));
    expect(page.hits.map((hit) => hit.threadTitle)).toEqual(expect.arrayContaining(['Trip planning', 'Garden']));
    // The user message and its answer in each thread (the answer repeats it): 4 hits, never Bob's 7788.
    expect(page.hits).toHaveLength(4);
    expect(JSON.stringify(page)).not.toContain('7788');
    expect(page.nextCursor).toBeNull();
    for (const hit of page.hits) {
      expect(marked(hit)).toContain('lisbon');
      expect(hit.seq).toBeGreaterThan(0);
      expect(['user', 'assistant']).toContain(hit.role);
    }
    const budget = page.hits.find((hit) => hit.threadId === trip.id && hit.role === 'user');
    expect(budget?.snippet).toContain('budgeting 4000 euros');
    expect(budget?.seq).toBe(1);

    // Stemming and websearch syntax: every word must match, "a phrase", -word.
    expect((await alice.search('/api/search?q=budgets%20lisbon')).hits.map((hit) => hit.threadId)).toEqual([
      trip.id,
      trip.id,
    ]);
    expect(
      (await alice.search(`/api/search?q=${encodeURIComponent('lisbon -tulips')}`)).hits.every(
        (hit) => hit.threadId === trip.id,
      ),
    ).toBe(true);
    expect(
      (await alice.search(`/api/search?q=${encodeURIComponent('"botanical garden"')}`)).hits.map((hit) => hit.threadId),
    ).toEqual([garden.id, garden.id]);
    expect((await alice.search(`/api/search?q=${encodeURIComponent('"garden botanical"')}`)).hits).toEqual([]);

    // One thread: only its hits; another user's thread is not found, a bad id is a clear 400.
    const inGarden = await alice.search(`/api/threads/${garden.id}/search?q=lisbon`);
    expect(inGarden.hits.map((hit) => hit.threadId)).toEqual([garden.id, garden.id]);
    const foreign = await server.app.api(`/api/threads/${bobs.id}/search?q=lisbon`, { token: alice.token });
    expect(foreign.status).toBe(404);
    expect(((await foreign.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    const malformed = await server.app.api('/api/threads/not-a-uuid/search?q=lisbon', { token: alice.token });
    expect(malformed.status).toBe(400);
    expect((await server.app.api('/api/search?q=lisbon')).status).toBe(401);
  });

  it('never returns forgotten messages, superseded answers, or pending, streaming, errored or cancelled ones', async () => {
    const carol = await user();
    const thread = await carol.newThread('Codes');
    const forgotten = await carol.send(thread.id, 'My locker code is LOCKER-5150 at the gym.');
    await carol.send(thread.id, 'The bike lock code is BIKE-2112.');
    expect((await carol.search('/api/search?q=LOCKER-5150')).hits.length).toBeGreaterThan(0);
    // Forget the user message and its answer: the tombstones are not found.
    expect(
      (
        await server.app.api(`/api/threads/${thread.id}/messages/${forgotten.userMessage.id}`, {
          method: 'DELETE',
          token: carol.token,
        })
      ).status,
    ).toBe(200);
    const [answer] = forgotten.messages;
    if (answer)
      await server.app.api(`/api/threads/${thread.id}/messages/${answer.id}`, { method: 'DELETE', token: carol.token });
    expect((await carol.search('/api/search?q=locker')).hits).toEqual([]);
    expect((await carol.search(`/api/threads/${thread.id}/search?q=gym`)).hits).toEqual([]);

    // Regenerate: the replaced answer is superseded and not found; its replacement is.
    const regenerated = await server.app.api(`/api/threads/${thread.id}/regenerate`, {
      method: 'POST',
      token: carol.token,
    });
    expect(regenerated.status).toBe(201);
    const { superseded, messages } = (await regenerated.json()) as RegenerateResponseDto;
    expect(superseded.length).toBe(1);
    const bikeHits = (await carol.search('/api/search?q=bike')).hits.map((hit) => hit.messageId);
    expect(bikeHits).not.toContain(superseded[0]?.id);
    expect(bikeHits).toContain(messages[0]?.id);

    // Messages that never completed are not found, whatever their text.
    const [{ last_seq: lastSeq } = { last_seq: 0 }] = await query<{ last_seq: number }>(
      server.app,
      'SELECT last_seq FROM threads WHERE id = $1',
      [thread.id],
    );
    let seq = lastSeq;
    for (const status of ['streaming', 'error', 'cancelled']) {
      seq += 1;
      await query(
        server.app,
        `INSERT INTO messages (id, thread_id, seq, role, content, status) VALUES (gen_random_uuid(), $1, $2, 'assistant', $3, $4)`,
        [thread.id, seq, `the zeppelin answer was ${status}`, status],
      );
    }
    await query(
      server.app,
      `INSERT INTO messages (id, thread_id, seq, role, content, status) VALUES (gen_random_uuid(), $1, NULL, 'user', 'a queued zeppelin question', 'pending')`,
      [thread.id],
    );
    await query(server.app, 'UPDATE threads SET last_seq = $2 WHERE id = $1', [thread.id, seq]);
    // Give even a complete-then-failed message a vector: the status alone must keep it out.
    await query(
      server.app,
      `UPDATE messages SET search_vector = to_tsvector('english', content) WHERE thread_id = $1 AND content LIKE '%zeppelin%'`,
      [thread.id],
    );
    expect((await carol.search('/api/search?q=zeppelin')).hits).toEqual([]);
    expect((await carol.search(`/api/threads/${thread.id}/search?q=zeppelin`)).hits).toEqual([]);

    // A fresh context hides older messages from the model, not from people.
    expect(
      (await server.app.api(`/api/threads/${thread.id}/context-reset`, { method: 'POST', token: carol.token })).status,
    ).toBe(201);
    expect((await carol.search('/api/search?q=BIKE-2112')).hits.length).toBeGreaterThan(0);
  });

  it('pages through many hits with an opaque cursor, and refuses bad queries and cursors with a clear 400', async () => {
    const dave = await user();
    const thread = await dave.newThread('Many');
    await dave.send(thread.id, 'first mention of the harpsichord');
    // 24 more complete messages mentioning it (indexed on insert by the search trigger), the newest ranking first.
    await query(
      server.app,
      `INSERT INTO messages (id, thread_id, seq, role, content, status, created_at)
      SELECT gen_random_uuid(), $1, 2 + n, CASE WHEN n % 2 = 0 THEN 'user' ELSE 'assistant' END, 'harpsichord note number ' || n, 'complete', now() + n * interval '1 second'
      FROM generate_series(1, 24) AS n`,
      [thread.id],
    );
    await query(server.app, 'UPDATE threads SET last_seq = 26 WHERE id = $1', [thread.id]);

    const seen: string[] = [];
    let cursor: string | null = null;
    const pages: number[] = [];
    do {
      const page: SearchPageDto = await dave.search(
        `/api/threads/${thread.id}/search?q=harpsichord&limit=10${cursor ? `&cursor=${cursor}` : ''}`,
      );
      pages.push(page.hits.length);
      seen.push(...page.hits.map((hit) => hit.messageId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(pages).toEqual([10, 10, 6]);
    expect(new Set(seen).size).toBe(26);
    // The same through the all-threads route (its own cursors).
    const first = await dave.search('/api/search?q=harpsichord&limit=20');
    expect(first.hits).toHaveLength(20);
    const second = await dave.search(`/api/search?q=harpsichord&limit=20&cursor=${first.nextCursor}`);
    expect(second.hits).toHaveLength(6);
    expect(second.nextCursor).toBeNull();

    const refusal = async (path: string) => {
      const response = await server.app.api(path, { token: dave.token });
      const body = (await response.json()) as { error: { code: string; message: string } };
      return { status: response.status, code: body.error.code, message: body.error.message };
    };
    expect(await refusal('/api/search')).toEqual({
      status: 400,
      code: 'VALIDATION',
      message: expect.stringContaining('q is required'),
    });
    expect(await refusal('/api/search?q=%20%20')).toEqual({
      status: 400,
      code: 'VALIDATION',
      message: expect.stringContaining('type something to search for'),
    });
    expect(await refusal(`/api/search?q=${'x'.repeat(501)}`)).toMatchObject({ status: 400, code: 'VALIDATION' });
    expect(await refusal('/api/search?q=harpsichord&limit=0')).toMatchObject({ status: 400, code: 'VALIDATION' });
    expect(await refusal('/api/search?q=harpsichord&limit=51')).toMatchObject({ status: 400, code: 'VALIDATION' });
    expect(await refusal('/api/search?q=harpsichord&cursor=garbage')).toEqual({
      status: 400,
      code: 'VALIDATION',
      message: expect.stringContaining('Invalid cursor'),
    });
    // A cursor of another search (another q, or the other route's scope) is refused, not silently misapplied.
    expect(await refusal(`/api/search?q=note&cursor=${first.nextCursor}`)).toEqual({
      status: 400,
      code: 'VALIDATION',
      message: expect.stringContaining('another search'),
    });
    expect(await refusal(`/api/threads/${thread.id}/search?q=harpsichord&cursor=${first.nextCursor}`)).toMatchObject({
      status: 400,
      code: 'VALIDATION',
    });
    // Query syntax people type never breaks the search (websearch parsing never fails); stop words alone find nothing.
    for (const odd of ['"unclosed', 'a & b | !c', 'or or -', '(harpsichord', 'harpsichord:*', "it's"]) {
      const response = await server.app.api(`/api/search?q=${encodeURIComponent(odd)}`, { token: dave.token });
      expect(response.status, odd).toBe(200);
    }
    expect((await dave.search('/api/search?q=the')).hits).toEqual([]);
  });
});

describe('the search routes are rate limited per user (SEARCH_PER_MINUTE), apart from the send limit', () => {
  const server = useChatServer({
    stub: { classifyRequest, responder: responder((request) => replyWithText(`Noted: ${lastUserText(request.body)}`)) },
    env: { SEARCH_PER_MINUTE: '3', RATE_LIMIT_PER_MINUTE: '2' },
  });

  it('answers 429 RATE_LIMITED with Retry-After past the limit over both routes, for that user only; sends keep their own budget', async () => {
    const { token } = server;
    const thread = (await (
      await server.app.api('/api/threads', { method: 'POST', token, json: { title: 'Plans' } })
    ).json()) as ThreadDto;
    expect(
      (
        await server.app.api(`/api/threads/${thread.id}/messages`, {
          method: 'POST',
          token,
          json: { content: 'The budget is 4000 euros.' },
        })
      ).status,
    ).toBe(201);

    // A bad query is refused before it counts.
    expect((await server.app.api('/api/search?q=', { token })).status).toBe(400);
    const statuses: number[] = [];
    for (const path of [
      '/api/search?q=budget',
      `/api/threads/${thread.id}/search?q=budget`,
      '/api/search?q=euros',
      `/api/threads/${thread.id}/search?q=budget`,
    ]) {
      statuses.push((await server.app.api(path, { token })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    const refused = await server.app.api('/api/search?q=budget', { token });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({
      error: { code: 'RATE_LIMITED', message: expect.stringMatching(/Too many searches/) },
    });

    // Searching spent nothing of the send limit (2 a minute here: one was used above, one is left).
    expect(
      (
        await server.app.api(`/api/threads/${thread.id}/messages`, {
          method: 'POST',
          token,
          json: { content: 'And the dates?' },
        })
      ).status,
    ).toBe(201);

    // Another user has a budget of their own.
    const other = await server.guest();
    const page = await server.app.api('/api/search?q=budget', { token: other.token });
    expect(page.status).toBe(200);
    expect(((await page.json()) as SearchPageDto).hits).toEqual([]);
  });
});
