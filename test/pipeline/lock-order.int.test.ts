import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/prisma-client';
import { createTurnRepository } from '../../src/db/turn-repository';
import type { ThreadDto } from '../../src/shared/api';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/**
 * Every writer locks a thread's row before its context entries (memory-controls-repository's lockThread, folds, appends).
 * A recount after an encoding change (saveTokenCounts) that took the entries first and the thread second could
 * deadlock with a forget or a pin of the same thread.
 */
const RECOUNT_APP = 'lock-order-recount';

describe('lock order: the thread row before its context entries', () => {
  let app: TestApp;
  let db: Database;
  let holder: pg.Client;
  let probe: pg.Client;

  beforeAll(async () => {
    app = await startTestApp();
    // Its own name, so the test watches the recount's connection wait, not any other backend.
    const url = new URL(app.databaseUrl);
    url.searchParams.set('application_name', RECOUNT_APP);
    db = createDatabase({ url: url.toString(), poolSize: 2 });
    holder = new pg.Client({ connectionString: app.databaseUrl });
    probe = new pg.Client({ connectionString: app.databaseUrl });
    await Promise.all([holder.connect(), probe.connect()]);
  });
  afterAll(async () => {
    await holder?.end();
    await probe?.end();
    await db?.$disconnect();
    await app?.stop();
  });

  it('saveTokenCounts waits for the thread row holding no entry lock', async () => {
    const { token } = await app.guest();
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    expect(
      (
        await app.api(`/api/threads/${thread.id}/messages`, {
          method: 'POST',
          token,
          json: { content: 'Count me again.' },
        })
      ).status,
    ).toBe(201);
    const seqs = (
      await probe.query<{ seq: number }>('SELECT seq FROM context_entries WHERE thread_id = $1 ORDER BY seq', [
        thread.id,
      ])
    ).rows.map((row) => row.seq);
    expect(seqs.length).toBeGreaterThan(0);

    // Another writer (a forget, say) holds the thread row.
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM threads WHERE id = $1 FOR UPDATE', [thread.id]);
    const turns = createTurnRepository(db);
    const saving = turns.saveTokenCounts({
      threadId: thread.id,
      encoding: 'o200k_base',
      entries: seqs.map((seq) => ({ seq, tokens: 7 })),
      summaryTokens: 3,
    });
    saving.catch(() => undefined);
    await waitFor(
      async () =>
        (
          await probe.query(
            "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name = $1",
            [RECOUNT_APP],
          )
        ).rows[0].waiting > 0,
      { what: "saveTokenCounts' connection to wait for a lock" },
    );

    // The waiting recount must hold no lock on the entries: the writer holding the thread can still take them.
    await probe.query('BEGIN');
    try {
      const locked = await probe
        .query('SELECT seq FROM context_entries WHERE thread_id = $1 FOR UPDATE NOWAIT', [thread.id])
        .then(
          () => 'free',
          (error: { code?: string }) => error.code,
        );
      expect(locked).toBe('free');
    } finally {
      await probe.query('ROLLBACK');
    }
    await holder.query('COMMIT');
    await saving;
    const stored = await probe.query<{ tokens: number }>('SELECT tokens FROM context_entries WHERE thread_id = $1', [
      thread.id,
    ]);
    expect(stored.rows.every((row) => row.tokens === 7)).toBe(true);
  });
});
