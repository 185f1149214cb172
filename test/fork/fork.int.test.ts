import { describe, expect, it } from 'vitest';
import type { AdminThreadDetailDto } from '../../src/shared/admin-api';
import type {
  ContextPackDto,
  ForkListDto,
  MessageDto,
  SearchPageDto,
  SendMessageResponseDto,
  ThreadDto,
} from '../../src/shared/api';
import { installWorkCounter, type CountedWork } from '../perf/count-work';
import { useChatServer } from '../support/chat-server';
import { lastUserText, replyWithText, replyWithToolCalls, type StubRequest } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { memoryKit, query, waitForIdleSummaryQueue } from '../memory/memory-test-kit';
import { seedLongThread } from './fork-test-kit';

/** The scripted model: `calc` calls the calculator, anything else is noted. */
function chat(request: StubRequest) {
  const last = request.body.messages.at(-1);
  if (last?.role === 'tool')
    return replyWithText(
      `Tools said: ${typeof last.content === 'string' ? last.content : JSON.stringify(last.content)}`,
    );
  const user = lastUserText(request.body);
  if (user === 'calc') return replyWithToolCalls([{ name: 'calculator', arguments: { expression: '(17 + 4) * 2' } }]);
  return replyWithText('noted');
}

interface RevisionRow {
  revision: number;
  text: string;
  through_seq: number;
  redacted_at: Date | null;
}

describe('forking a thread at a message', () => {
  const server = useChatServer({
    stub: { classifyRequest, responder: summaryResponder({ chat }) },
    // FORK_MAX_MESSAGES above its default: one test forks a 10,000-message thread.
    env: { SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2', FORK_MAX_MESSAGES: '10000' },
  });
  const kit = memoryKit(server);

  const fork = (threadId: string, atMessageId: string, as = server.token) =>
    server.app.api(`/api/threads/${threadId}/fork`, { method: 'POST', token: as, json: { atMessageId } });
  const sendAndSettle = async (threadId: string, content: string): Promise<SendMessageResponseDto> => {
    const result = await kit.send(threadId, content);
    await waitForIdleSummaryQueue(server.app);
    return result;
  };

  it('copies the transcript through the message, the latest summary revision not past it, the window after it, the pins and the settings', async () => {
    const parent = await kit.createThread('Trip planning');
    const first = await sendAndSettle(parent.id, 'Remember: the locker code is CODE-101.');
    expect(
      (
        await server.app.api(`/api/threads/${parent.id}/messages/${first.userMessage.id}/pin`, {
          method: 'POST',
          token: server.token,
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await server.app.api(`/api/threads/${parent.id}/settings`, {
          method: 'PATCH',
          token: server.token,
          json: { keep: 'messages=3' },
        })
      ).status,
    ).toBe(200);
    for (let turn = 2; turn <= 5; turn += 1)
      await sendAndSettle(parent.id, `Turn ${turn}: CODE-${100 + turn} is noted.`);
    const at = await sendAndSettle(parent.id, 'Turn 6: this is where we branch, CODE-106.');
    const forkSeq = at.messages.at(-1)?.seq ?? 0;
    // The parent goes on and folds past the fork point; a pin after it is not the fork's.
    for (let turn = 7; turn <= 10; turn += 1)
      await sendAndSettle(parent.id, `Turn ${turn}: CODE-${100 + turn} after the branch.`);
    const later = (await kit.transcript(parent.id)).find((message) => message.content.includes('Turn 9'));
    expect(
      (
        await server.app.api(`/api/threads/${parent.id}/messages/${later?.id}/pin`, {
          method: 'POST',
          token: server.token,
        })
      ).status,
    ).toBe(200);
    await kit.waitForFoldThrough(parent.id, forkSeq + 1);

    const response = await fork(parent.id, at.messages.at(-1)?.id ?? '');
    expect(response.status).toBe(201);
    const forked = (await response.json()) as ThreadDto;
    expect(forked).toMatchObject({
      title: 'Trip planning (branch)',
      forkedFrom: { threadId: parent.id, seq: forkSeq },
      memoryRebuilding: false,
    });
    expect(forked.id).not.toBe(parent.id);

    // The transcript: the parent's through the fork point, as new messages of the fork.
    const parentMessages = (await kit.transcript(parent.id)).filter((message) => (message.seq ?? 0) <= forkSeq);
    const forkMessages = await kit.transcript(forked.id);
    const shape = (messages: MessageDto[]) =>
      messages.map(({ seq, role, content, status, tokens }) => ({ seq, role, content, status, tokens }));
    expect(shape(forkMessages)).toEqual(shape(parentMessages));
    expect(
      forkMessages.every(
        (message) => message.threadId === forked.id && !parentMessages.some((original) => original.id === message.id),
      ),
    ).toBe(true);

    // The summary: the parent's latest unredacted revision that covers nothing after the fork point.
    const revisions = await query<RevisionRow>(
      server.app,
      'SELECT revision, text, through_seq, redacted_at FROM summary_revisions WHERE thread_id = $1 ORDER BY revision',
      [parent.id],
    );
    const chosen = revisions.filter((revision) => revision.through_seq <= forkSeq && !revision.redacted_at).at(-1);
    expect(chosen).toBeDefined();
    expect(revisions.at(-1)?.through_seq).toBeGreaterThan(forkSeq);
    const context = await kit.context(forked.id);
    expect(context.summary).toMatchObject({
      revision: chosen?.revision,
      text: chosen?.text,
      coveredThroughSeq: chosen?.through_seq,
    });
    // The window: the parent's messages after that revision through the fork point, with their stored counts.
    const windowSeqs = forkMessages
      .filter((message) => (message.seq ?? 0) > (chosen?.through_seq ?? 0))
      .map((message) => message.seq);
    const entries = await query<{ seq: number; tokens: number; pinned: boolean }>(
      server.app,
      'SELECT seq, tokens, pinned FROM context_entries WHERE thread_id = $1 ORDER BY seq',
      [forked.id],
    );
    expect(entries.filter((entry) => !entry.pinned).map((entry) => entry.seq)).toEqual(windowSeqs);
    const storedTokens = new Map(parentMessages.map((message) => [message.seq, message.tokens]));
    for (const entry of entries) expect(entry.tokens).toBe(storedTokens.get(entry.seq));
    // (Empty when the chosen revision ends right at the fork point.)
    expect(context.window).toMatchObject(
      windowSeqs.length > 0 ? { fromSeq: windowSeqs[0], throughSeq: forkSeq } : { entries: 0 },
    );
    // Pins at or before the fork point; settings as the parent's.
    expect(context.pinnedSeqs).toEqual([1]);
    expect(forkMessages.find((message) => message.seq === 1)?.pinned).toBe(true);
    const settings = (await (
      await server.app.api(`/api/threads/${forked.id}/settings`, { token: server.token })
    ).json()) as { keep: string | null };
    expect(settings.keep).toBe('messages=3');
    // Its revision history is the parent's through the chosen revision.
    const forkRevisions = await query<RevisionRow>(
      server.app,
      'SELECT revision, text, through_seq, redacted_at FROM summary_revisions WHERE thread_id = $1 ORDER BY revision',
      [forked.id],
    );
    expect(forkRevisions.map((revision) => revision.revision)).toEqual(
      revisions.filter((revision) => revision.revision <= (chosen?.revision ?? 0)).map((revision) => revision.revision),
    );

    // The parent lists it at the fork point; the export says where the fork came from.
    const forks = (await (
      await server.app.api(`/api/threads/${parent.id}/forks`, { token: server.token })
    ).json()) as ForkListDto;
    expect(forks.forks).toEqual([
      expect.objectContaining({ threadId: forked.id, seq: forkSeq, title: 'Trip planning (branch)' }),
    ]);
    const exported = await (
      await server.app.api(`/api/threads/${forked.id}/export?format=markdown`, { token: server.token })
    ).text();
    expect(exported).toContain(`Forked from thread ${parent.id} at message #${forkSeq}`);
    const exportedJson = (await (
      await server.app.api(`/api/threads/${forked.id}/export`, { token: server.token })
    ).json()) as { thread: ThreadDto };
    expect(exportedJson.thread.forkedFrom).toEqual({ threadId: parent.id, seq: forkSeq });

    // Admin: the lineage both ways in the thread detail.
    const adminDetail = async (id: string) =>
      (await (
        await server.app.api(`/api/admin/threads/${id}`, { token: 'test-admin-token-0123456789' })
      ).json()) as AdminThreadDetailDto;
    expect((await adminDetail(forked.id)).lineage).toEqual({
      parent: { threadId: parent.id, title: 'Trip planning', seq: forkSeq },
      forks: [],
    });
    expect((await adminDetail(parent.id)).lineage.forks).toEqual([
      expect.objectContaining({ threadId: forked.id, seq: forkSeq }),
    ]);

    // Search: a message both hold is listed once per thread, the fork's copy marked.
    const search = (await (
      await server.app.api('/api/search?q=CODE-101', { token: server.token })
    ).json()) as SearchPageDto;
    const locker = search.hits.filter((hit) => hit.seq === 1);
    expect(
      locker
        .map((hit) => ({ threadId: hit.threadId, forkCopy: hit.forkCopy }))
        .sort((a, b) => Number(a.forkCopy) - Number(b.forkCopy)),
    ).toEqual([
      { threadId: parent.id, forkCopy: false },
      { threadId: forked.id, forkCopy: true },
    ]);
  });

  // That a fork's copied condensed result is readable by its handle: test/tools/large-results.int.test.ts.
  it('snaps a fork inside a tool exchange to its end', async () => {
    const parent = await kit.createThread('Tools');
    const result = await sendAndSettle(parent.id, 'calc');
    const [call, toolMessage, answer] = result.messages;
    expect(call?.toolCalls?.[0]?.name).toBe('calculator');
    expect(toolMessage?.role).toBe('tool');
    expect(answer?.content).toContain('42');
    const response = await fork(parent.id, call?.id ?? '');
    expect(response.status).toBe(201);
    const forked = (await response.json()) as ThreadDto;
    // The exchange is the assistant's call and its result: the fork ends with the result, not half of it.
    expect(forked.forkedFrom?.seq).toBe(toolMessage?.seq);
    const forkContext: ContextPackDto = await kit.context(forked.id);
    expect(forkContext.messages.slice(-2).map((message) => message.role)).toEqual(['assistant', 'tool']);
  });

  it("refuses clearly and writes nothing for a bad request, another user's thread or a message still waiting", async () => {
    const parent = await kit.createThread('Refusals');
    const sent = await kit.send(parent.id, 'hello');
    const countForks = async () =>
      (
        await query<{ n: number }>(
          server.app,
          'SELECT count(*)::int AS n FROM threads WHERE forked_from_thread_id = $1',
          [parent.id],
        )
      )[0]?.n;

    const missing = await server.app.api(`/api/threads/${parent.id}/fork`, {
      method: 'POST',
      token: server.token,
      json: {},
    });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('VALIDATION');
    expect((await fork(parent.id, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const stranger = await server.guest();
    const foreign = await fork(parent.id, sent.userMessage.id, stranger.token);
    expect(foreign.status).toBe(404);
    expect(((await foreign.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');

    // A message still queued behind the running turn has no place in a fork yet.
    await query(
      server.app,
      `INSERT INTO messages (id, thread_id, role, content, status, tokens, encoding) VALUES (gen_random_uuid(), $1, 'user', 'waiting', 'pending', 3, 'o200k_base')`,
      [parent.id],
    );
    const pending = (
      await query<{ id: string }>(server.app, `SELECT id FROM messages WHERE thread_id = $1 AND status = 'pending'`, [
        parent.id,
      ])
    )[0];
    const waiting = await fork(parent.id, pending?.id ?? '');
    expect(waiting.status).toBe(409);
    expect(((await waiting.json()) as { error: { message: string } }).error.message).toMatch(/waiting for its turn/);
    // A turn still running at the fork point: BUSY. Running under another process' live lease, so the sweeper
    // does not fail it as interrupted before the fork is asked (it did once: the fork then succeeded).
    await query(
      server.app,
      `UPDATE threads SET lease_owner = 'another-process', lease_expires_at = now() + interval '1 hour' WHERE id = $1`,
      [parent.id],
    );
    await query(server.app, `UPDATE turns SET status = 'running' WHERE thread_id = $1`, [parent.id]);
    const busy = await fork(parent.id, sent.userMessage.id);
    expect(busy.status).toBe(409);
    expect(((await busy.json()) as { error: { code: string } }).error.code).toBe('BUSY');
    expect(await countForks()).toBe(0);
  });

  it('forks a 10,000-message thread in one statement: search index rows copied, counts not recomputed', async () => {
    const parent = await kit.createThread('Long');
    const seeded = await seedLongThread(server.app, parent.id, { messages: 10_000, window: 40 });
    const last = (
      await query<{ id: string }>(server.app, 'SELECT id FROM messages WHERE thread_id = $1 AND seq = $2', [
        parent.id,
        10_000,
      ])
    )[0];
    // The work the server does for the fork, counted (not timed: a loaded machine makes any time bound a guess).
    const counter = installWorkCounter();
    let work: CountedWork;
    let response: Response;
    try {
      counter.start();
      response = await fork(parent.id, last?.id ?? '');
      work = counter.stop();
    } finally {
      counter.uninstall();
    }
    expect(response.status).toBe(201);
    const forked = (await response.json()) as ThreadDto;
    // One statement copies the thread, whatever its length: the transcript never passes through the server (the
    // other statements are the request's checks and the sweeper's, a few rows at most), nothing is counted again.
    const forkStatements = Object.entries(work.statements).filter(([text]) => text.startsWith('WITH parent AS'));
    expect(forkStatements.map(([, count]) => count)).toEqual([1]);
    expect(work.figures.sqlRows).toBeLessThan(100);
    expect(work.figures.tokenizerCalls).toBe(0);
    const [copied] = await query<{ messages: number; vectors: number; sameVectors: number; turns: number }>(
      server.app,
      `
      SELECT (SELECT count(*)::int FROM messages WHERE thread_id = $2) AS messages,
        (SELECT count(*)::int FROM messages WHERE thread_id = $2 AND search_vector IS NOT NULL) AS vectors,
        (SELECT count(*)::int FROM messages f JOIN messages p ON p.id = f.origin_message_id WHERE f.thread_id = $2 AND p.thread_id = $1
          AND f.search_vector = p.search_vector AND f.tokens = p.tokens) AS "sameVectors",
        (SELECT count(*)::int FROM turns WHERE thread_id = $2) AS turns`,
      [parent.id, forked.id],
    );
    expect(copied).toEqual({ messages: 10_000, vectors: 10_000, sameVectors: 10_000, turns: 5_000 });
    const context = await kit.context(forked.id);
    expect(context.summary).toMatchObject({ revision: seeded.revision, coveredThroughSeq: 10_000 - 40 });
    expect(context.window).toMatchObject({ fromSeq: 10_000 - 39, throughSeq: 10_000, entries: 40 });
    // The copied search index answers in the fork.
    const hits = await query<{ n: number }>(
      server.app,
      `SELECT count(*)::int AS n FROM messages WHERE thread_id = $1 AND search_vector @@ plainto_tsquery('english', 'CODE-4321')`,
      [forked.id],
    );
    expect(hits[0]?.n).toBeGreaterThan(0);
  });
});
