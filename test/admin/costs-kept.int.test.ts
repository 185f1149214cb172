// The cost history outlives what it was spent on (issue 33): deleting a thread, erasing a user and RETENTION_DAYS keep
// the model-call rows (detached, or anonymised), so the admin's totals of earlier days never shrink.
import { describe, expect, it } from 'vitest';
import type { CostReportDto } from '../../src/shared/admin-api';
import { useChatServer } from '../support/chat-server';
import { lastUserText, replyWithText } from '../support/openai-stub';
import { waitFor } from '../support/wait-for';
import { jobsNaming, memoryKit, query } from '../memory/memory-test-kit';

const ADMIN_TOKEN = 'test-admin-token-0123456789';
const PRICES = { 'gpt-4o-mini': { input: 2, cachedInput: 1, output: 8 } };

describe('the estimated costs keep the calls of deleted threads and erased users', () => {
  // A message beginning "Unreported" is answered without usage: its completion tokens are our count of the answer.
  const server = useChatServer({
    stub: {
      responder: (request) => {
        const text = lastUserText(request.body);
        return replyWithText(`stub reply to: ${text}`, text.startsWith('Unreported') ? { omitUsage: true } : {});
      },
    },
    env: {
      CHAT_MODEL: 'gpt-4o-mini',
      MODEL_PRICES: JSON.stringify(PRICES),
      SUMMARY_TRIGGER: 'messages=4',
      SUMMARY_KEEP: 'messages=2',
    },
  });

  async function costs(by: 'day' | 'user' | 'thread'): Promise<CostReportDto> {
    const response = await server.app.api(`/api/admin/costs?by=${by}`, { token: ADMIN_TOKEN });
    expect(response.status).toBe(200);
    return (await response.json()) as CostReportDto;
  }

  async function idleFoldScheduled(threadId: string): Promise<void> {
    await waitFor(async () => (await jobsNaming(server.app, [threadId])).includes('summary:idle-fold:delayed'), {
      timeoutMs: 5000,
      what: `the idle fold of ${threadId}`,
    });
  }

  it('deleting a thread leaves the totals unchanged, shows its calls as "(deleted thread)" under the same user, and removes its queued jobs', async () => {
    const kit = memoryKit(server);
    const kept = await kit.createThread('kept');
    await kit.send(kept.id, 'Hello.');
    const doomed = await kit.createThread('doomed');
    await kit.send(doomed.id, 'Doomed one: the boat is called Nimbus.');
    await kit.send(doomed.id, 'Unreported doomed two.');
    await kit.send(doomed.id, 'Doomed three.');
    await kit.waitForFoldThrough(doomed.id, 2);
    await idleFoldScheduled(doomed.id);
    await idleFoldScheduled(kept.id);
    // A finished tool run whose next poll is still delayed (a background task's): tool jobs name the run.
    const answer = (await kit.transcript(doomed.id)).find((message) => message.role === 'assistant')!;
    const [run] = await query<{ id: string }>(
      server.app,
      `INSERT INTO tool_runs (id, thread_id, message_id, tool_call_id, name, args, status, started_at_seq)
      VALUES (gen_random_uuid(), $1, $2, 'call-delete', 'analyze_thread', '{}', 'succeeded', 1) RETURNING id::text`,
      [doomed.id, answer.id],
    );
    const runIds = [run!.id];
    await server.app.application.toolQueue.enqueuePoll(run!.id, 3_600_000);
    expect(await jobsNaming(server.app, [], runIds)).toEqual(['tools:poll:delayed']);

    const [dayBefore, threadBefore, userBefore] = [await costs('day'), await costs('thread'), await costs('user')];
    const doomedRow = threadBefore.rows.find((row) => row.key === doomed.id);
    // Three answers (one unreported: estimated) and at least one fold.
    expect(doomedRow).toMatchObject({ label: 'doomed', estimatedCalls: 1 });
    expect(doomedRow!.calls).toBeGreaterThanOrEqual(4);
    expect(threadBefore.rows.some((row) => row.key === '')).toBe(false);

    expect((await server.app.api(`/api/threads/${doomed.id}`, { method: 'DELETE', token: kit.token })).status).toBe(
      204,
    );

    const [dayAfter, threadAfter, userAfter] = [await costs('day'), await costs('thread'), await costs('user')];
    expect(dayAfter.total).toEqual(dayBefore.total);
    expect(dayAfter.rows).toEqual(dayBefore.rows);
    expect(threadAfter.total).toEqual(threadBefore.total);
    const { key: _key, label: _label, ...figures } = doomedRow!;
    expect(threadAfter.rows.find((row) => row.key === '')).toEqual({ key: '', label: '(deleted thread)', ...figures });
    expect(threadAfter.rows.some((row) => row.key === doomed.id)).toBe(false);
    // The owner's costs are whole: the deleted thread's calls still count for them.
    expect(userAfter.rows).toEqual(userBefore.rows);
    expect(userAfter.rows.find((row) => row.key === server.userId)?.calls).toBe(doomedRow!.calls + 1);

    // Nothing of the conversation is left on the kept rows.
    const detached = await query<{ leftovers: number }>(
      server.app,
      `SELECT count(*)::int AS leftovers FROM model_calls WHERE thread_id IS NULL AND user_id = $1
        AND (message_id IS NOT NULL OR tool_results IS NOT NULL OR system_prefix_hash IS NOT NULL OR prompt_fingerprints <> '{}')`,
      [server.userId],
    );
    expect(detached).toEqual([{ leftovers: 0 }]);
    // Its queued jobs (the idle fold, its run's poll) and finished ones went with it; the other thread's stay.
    expect(await jobsNaming(server.app, [doomed.id], runIds)).toEqual([]);
    expect(await jobsNaming(server.app, [kept.id])).toContain('summary:idle-fold:delayed');
  });

  it('erasing a user leaves the totals unchanged and their calls anonymised: no user, no thread, no content', async () => {
    const erased = await server.guest();
    const kit = memoryKit(server.app, erased.token);
    const thread = await kit.createThread('to erase');
    await kit.send(thread.id, 'Erase me: my name is Erasmus.');
    await kit.send(thread.id, 'Unreported: my boat is called Nimbus.');
    const ids = (
      await query<{ id: string }>(server.app, 'SELECT id::text FROM model_calls WHERE user_id = $1', [erased.userId])
    ).map((row) => row.id);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    const [dayBefore, userBefore] = [await costs('day'), await costs('user')];
    const erasedRow = userBefore.rows.find((row) => row.key === erased.userId);
    expect(erasedRow?.calls).toBe(ids.length);

    expect((await server.app.api('/api/me', { method: 'DELETE', token: erased.token })).status).toBe(204);

    const [dayAfter, userAfter] = [await costs('day'), await costs('user')];
    expect(dayAfter.total).toEqual(dayBefore.total);
    expect(dayAfter.rows).toEqual(dayBefore.rows);
    expect(userAfter.rows.some((row) => row.key === erased.userId)).toBe(false);
    const anonymous = userAfter.rows.find((row) => row.key === '');
    expect(anonymous).toMatchObject({ label: '(erased user)' });
    expect(anonymous!.calls).toBe((userBefore.rows.find((row) => row.key === '')?.calls ?? 0) + ids.length);

    const rows = await query<Record<string, unknown>>(
      server.app,
      `SELECT user_id, thread_id, message_id, tool_results, error, system_prefix_hash, prompt_fingerprints, tools_fingerprint,
        saved_memory_ids, recalled_elsewhere, recall_note, estimated_prompt_tokens > 0 AS figures
       FROM model_calls WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    expect(rows).toHaveLength(ids.length);
    for (const row of rows)
      expect(row).toEqual({
        user_id: null,
        thread_id: null,
        message_id: null,
        tool_results: null,
        error: null,
        system_prefix_hash: null,
        prompt_fingerprints: [],
        tools_fingerprint: null,
        saved_memory_ids: [],
        recalled_elsewhere: null,
        recall_note: null,
        figures: true,
      });
  });
});
