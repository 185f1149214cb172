import { describe, expect, it } from 'vitest';
import { useChatServer } from '../support/chat-server';
import { waitFor } from '../support/wait-for';
import { jobsNaming, memoryKit, query } from './memory-test-kit';

describe('RETENTION_DAYS: the sweeper erases idle threads and old guests', () => {
  const server = useChatServer({ env: { RETENTION_DAYS: '30', GUEST_MAX_AGE: '2d' } });

  it('deletes threads idle past RETENTION_DAYS (a fork of one stays, unlinked) and erases guests past GUEST_MAX_AGE + RETENTION_DAYS, with their jobs', async () => {
    const kit = memoryKit(server);
    const idle = await kit.createThread('Idle');
    const said = await kit.send(idle.id, 'An old conversation.');
    const forked = await server.app.api(`/api/threads/${idle.id}/fork`, {
      method: 'POST',
      token: server.token,
      json: { atMessageId: said.messages.at(-1)!.id },
    });
    expect(forked.status).toBe(201);
    const fork = (await forked.json()) as { id: string };
    const active = await kit.createThread('Active');
    await kit.send(active.id, 'A recent conversation.');
    const old = await server.guest();
    const oldKit = memoryKit(server.app, old.token);
    const oldThread = await oldKit.createThread('Old guest');
    await oldKit.send(oldThread.id, 'Hello from long ago.');
    // Each turn scheduled its thread's idle fold: the deleted threads' jobs must go with them, the others' stay.
    // (Checked before the threads age: the test app sweeps every 500 ms.)
    for (const thread of [idle, active, oldThread]) {
      await waitFor(async () => (await jobsNaming(server.app, [thread.id])).includes('summary:idle-fold:delayed'), {
        timeoutMs: 5000,
        what: `${thread.title}'s idle fold`,
      });
    }
    // Their call records stay for the costs, anonymised: the total of calls never shrinks. (Read before the threads
    // age, like the jobs above.)
    const idleCalls = (
      await query<{ id: string }>(server.app, 'SELECT id::text FROM model_calls WHERE thread_id = $1', [idle.id])
    ).map((row) => row.id);
    expect(idleCalls.length).toBeGreaterThan(0);
    const callsBefore = await query(server.app, 'SELECT count(*)::int AS n FROM model_calls');

    await query(server.app, `UPDATE threads SET last_activity_at = now() - interval '31 days' WHERE id = $1`, [
      idle.id,
    ]);
    // Past GUEST_MAX_AGE (2 days) plus RETENTION_DAYS (30): erased whole, with a tombstone.
    await query(server.app, `UPDATE users SET created_at = now() - interval '33 days' WHERE id = $1`, [old.userId]);
    const young = await server.guest();
    await query(server.app, `UPDATE users SET created_at = now() - interval '31 days' WHERE id = $1`, [young.userId]);

    await server.app.application.sweeper.sweep();

    expect(await query(server.app, 'SELECT count(*)::int AS n FROM model_calls')).toEqual(callsBefore);
    expect(
      await query(
        server.app,
        'SELECT count(*)::int AS n FROM model_calls WHERE id = ANY($1::uuid[]) AND user_id IS NULL AND thread_id IS NULL AND message_id IS NULL',
        [idleCalls],
      ),
    ).toEqual([{ n: idleCalls.length }]);

    const threads = (await query<{ id: string }>(server.app, 'SELECT id::text FROM threads')).map((row) => row.id);
    expect(threads).not.toContain(idle.id);
    expect(threads).toContain(active.id);
    expect(threads).toContain(fork.id);
    expect((await query(server.app, 'SELECT 1 FROM messages WHERE thread_id = $1', [idle.id])).length).toBe(0);
    expect(threads).not.toContain(oldThread.id);
    expect((await query(server.app, 'SELECT 1 FROM users WHERE id = $1', [old.userId])).length).toBe(0);
    expect(await query(server.app, 'SELECT kind FROM erased_users WHERE user_id = $1', [old.userId])).toEqual([
      { kind: 'guest' },
    ]);
    expect((await server.app.api('/api/threads', { token: old.token })).status).toBe(401);
    expect((await query(server.app, 'SELECT 1 FROM users WHERE id = $1', [young.userId])).length).toBe(1);
    expect(await jobsNaming(server.app, [idle.id, oldThread.id])).toEqual([]);
    expect(await jobsNaming(server.app, [active.id])).toContain('summary:idle-fold:delayed');
  });
});
