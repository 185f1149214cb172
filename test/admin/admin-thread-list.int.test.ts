import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminThreadDto, AdminThreadPageDto, QueueListDto } from '../../src/shared/admin-api';
import type { ThreadDto } from '../../src/shared/api';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { startTestApp, type TestApp } from '../support/test-app';

const ADMIN_TOKEN = 'test-admin-token-0123456789';

/** A serving process without workers: folds are enqueued but never run, so the fold lag stays observable. */
describe('the admin thread list', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  const threads: Record<string, ThreadDto> = {};

  async function list(query: string): Promise<AdminThreadPageDto> {
    const response = await app.api(`/api/admin/threads${query}`, { token: ADMIN_TOKEN });
    expect(response.status).toBe(200);
    return (await response.json()) as AdminThreadPageDto;
  }

  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest, responder: summaryResponder() });
    app = await startTestApp({
      mode: 'serve',
      env: { OPENAI_BASE_URL: stub.url, SUMMARY_TRIGGER: 'messages=4', SUMMARY_KEEP: 'messages=2' },
    });
    const alice = await app.guest();
    const bob = await app.guest();
    for (const [name, owner, turns] of [
      ['lagging', alice, 3],
      ['quiet', bob, 1],
      ['empty', bob, 0],
    ] as const) {
      const thread = (await (
        await app.api('/api/threads', { method: 'POST', token: owner.token, json: { title: `${name} thread` } })
      ).json()) as ThreadDto;
      threads[name] = thread;
      for (let turn = 1; turn <= turns; turn += 1) {
        const response = await app.api(`/api/threads/${thread.id}/messages`, {
          method: 'POST',
          token: owner.token,
          json: { content: `${name} ${turn}` },
        });
        expect(response.status).toBe(201);
      }
    }
  });
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
  });

  it("shows every user's threads with owner, counts and the entries waiting to be folded", async () => {
    const page = await list('?sort=lag');
    const byTitle = new Map(page.threads.map((thread) => [thread.title, thread] as const));
    // 6 window entries, trigger messages=4 fires, keep messages=2 keeps 2: 4 wait to be folded.
    expect(byTitle.get('lagging thread')).toMatchObject<Partial<AdminThreadDto>>({
      messageCount: 6,
      windowEntries: 6,
      foldLagEntries: 4,
      lastFoldAt: null,
      lastFoldError: null,
    });
    expect(byTitle.get('lagging thread')?.windowTokens).toBeGreaterThan(0);
    // Below the trigger nothing waits, even though the window is at the keep size.
    expect(byTitle.get('quiet thread')).toMatchObject({ messageCount: 2, windowEntries: 2, foldLagEntries: 0 });
    expect(byTitle.get('empty thread')).toMatchObject({
      messageCount: 0,
      windowEntries: 0,
      foldLagEntries: 0,
      summary: { preview: '', tokens: 0, revision: 0, coveredThroughSeq: 0 },
    });
    expect(page.threads[0]?.title).toBe('lagging thread');
    expect(new Set(page.threads.map((thread) => thread.owner.id)).size).toBe(2);
  });

  it('filters by title or owner and pages with a cursor', async () => {
    expect((await list('?query=quiet')).threads.map((thread) => thread.title)).toEqual(['quiet thread']);
    const bobsId = (await list('?query=quiet')).threads[0]?.owner.id ?? '';
    expect((await list(`?query=${encodeURIComponent(bobsId)}`)).threads.map((thread) => thread.title).sort()).toEqual([
      'empty thread',
      'quiet thread',
    ]);
    expect((await list('?query=100%25')).threads).toEqual([]);

    for (const sort of ['activity', 'lag', 'summary', 'errors']) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: AdminThreadPageDto = await list(`?sort=${sort}&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...page.threads.map((thread) => thread.id));
        cursor = page.nextCursor;
      } while (cursor);
      expect(seen.sort()).toEqual(
        Object.values(threads)
          .map((thread) => thread.id)
          .sort(),
      );
    }
    const newestFirst = await list('?sort=activity');
    expect(newestFirst.threads.map((thread) => thread.title)).toEqual([
      'empty thread',
      'quiet thread',
      'lagging thread',
    ]);
    expect((await app.api('/api/admin/threads?sort=size', { token: ADMIN_TOKEN })).status).toBe(400);
  });

  it('counts the waiting summary jobs, next to the tools queue', async () => {
    const body = (await (await app.api('/api/admin/queues', { token: ADMIN_TOKEN })).json()) as QueueListDto;
    expect(body.queues.map((queue) => queue.name)).toEqual(['summary', 'tools']);
    const summary = body.queues.find((queue) => queue.name === 'summary');
    expect(summary).toMatchObject({ active: 0, failed: 0 });
    expect(summary?.waiting).toBeGreaterThanOrEqual(1);
  });
});
