import { describe, expect, it } from 'vitest';
import { OMITTED_NOTE_WINDOW_ONLY } from '../../src/core/context';
import type { ThreadDto, ThreadMemorySettingsDto } from '../../src/shared/api';
import { replyWithText } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { useChatServer } from '../support/chat-server';
import { adminToken, memoryKit, query, recordEvents, waitForIdleSummaryQueue } from './memory-test-kit';

describe('per-thread memory settings through REST', () => {
  const server = useChatServer({
    stub: { classifyRequest, responder: summaryResponder({ chat: () => replyWithText('noted') }) },
    env: {
      SUMMARY_TRIGGER: 'messages=6',
      SUMMARY_KEEP: 'messages=2',
      SUMMARY_MAX_TOKENS: '100',
      SUMMARY_INPUT_MAX_TOKENS: '400',
      CONTEXT_MAX_INPUT_TOKENS: '1100',
      RESERVED_OUTPUT_TOKENS: '200',
    },
  });
  const kit = memoryKit(server);

  const patch = (threadId: string, json: unknown, as = server.token) =>
    server.app.api(`/api/threads/${threadId}/settings`, { method: 'PATCH', token: as, json });

  it('validates trigger and keep like the env policies, naming the field', async () => {
    const thread = await kit.createThread();
    const cases: [unknown, RegExp][] = [
      [{ trigger: 'sometimes' }, /^trigger: invalid term "sometimes"/],
      [{ keep: 'messages=5' }, /^keep: keep=messages=5 keeps too many messages for trigger messages=6/],
      [{ trigger: 'tokens=100' }, /^trigger: trigger tokens=100 fires at 100 tokens/],
      [{ keep: 'tokens=2000', trigger: 'tokens=3000' }, /exceeds the pack budget of 900 tokens/],
      [{ memory: 'forgetful' }, /^Invalid settings: memory/],
    ];
    for (const [body, message] of cases) {
      const response = await patch(thread.id, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      const error = ((await response.json()) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('VALIDATION');
      expect(error.message).toMatch(message);
    }
    const defaults = (await (
      await server.app.api(`/api/threads/${thread.id}/settings`, { token: server.token })
    ).json()) as ThreadMemorySettingsDto;
    expect(defaults).toMatchObject({
      trigger: null,
      keep: null,
      memory: 'summary',
      defaults: { trigger: 'messages=6', keep: 'messages=2' },
      pinnedMaxTokens: 225,
    });

    const recorder = recordEvents(server.app, thread.id);
    const ok = await patch(thread.id, { trigger: 'messages=10', keep: 'messages=3' });
    expect(ok.status).toBe(200);
    expect((await ok.json()) as ThreadMemorySettingsDto).toMatchObject({
      trigger: 'messages=10',
      keep: 'messages=3',
      thread: { settings: { trigger: 'messages=10', keep: 'messages=3' } },
    });
    const renamed = await server.app.api(`/api/threads/${thread.id}`, {
      method: 'PATCH',
      token: server.token,
      json: { title: 'renamed' },
    });
    expect(renamed.status).toBe(200);
    const updates = recorder.events.flatMap((event) => (event.type === 'thread-updated' ? [event.thread] : []));
    expect(updates.map((update: ThreadDto) => [update.title, update.settings.trigger])).toEqual([
      ['memory', 'messages=10'],
      ['renamed', 'messages=10'],
    ]);
    recorder.stop();
    // Back to the deployment's policy.
    expect(
      ((await (await patch(thread.id, { trigger: null, keep: null })).json()) as ThreadMemorySettingsDto).trigger,
    ).toBeNull();
  });

  it('shows the recall settings on the thread itself (GET /api/threads/:id, the thread list, thread-updated events)', async () => {
    const thread = await kit.createThread('recall settings');
    expect(thread.settings).toEqual({
      trigger: null,
      keep: null,
      summaryPrompt: null,
      recallTokens: null,
      recallScope: null,
    });
    const recorder = recordEvents(server.app, thread.id);
    expect((await patch(thread.id, { recallScope: 'thread', recallTokens: 0 })).status).toBe(200);
    const shown = (await (
      await server.app.api(`/api/threads/${thread.id}`, { token: server.token })
    ).json()) as ThreadDto;
    expect(shown.settings).toMatchObject({ recallScope: 'thread', recallTokens: 0 });
    const listed = (await (await server.app.api('/api/threads', { token: server.token })).json()) as {
      threads: ThreadDto[];
    };
    expect(listed.threads.find((each) => each.id === thread.id)?.settings).toMatchObject({
      recallScope: 'thread',
      recallTokens: 0,
    });
    expect(
      recorder.events.flatMap((event) => (event.type === 'thread-updated' ? [event.thread.settings.recallScope] : [])),
    ).toEqual(['thread']);
    recorder.stop();
    expect((await patch(thread.id, { recallScope: null, recallTokens: null })).status).toBe(200);
    expect(
      ((await (await server.app.api(`/api/threads/${thread.id}`, { token: server.token })).json()) as ThreadDto)
        .settings,
    ).toMatchObject({ recallScope: null, recallTokens: null });
  });

  it('lets only admins set the summary prompt, which the next fold uses', async () => {
    const thread = await kit.createThread();
    const prompt =
      'You keep the running summary of this support chat. Write it in two lines. Only cite #{{fromSeq}} to #{{throughSeq}}.';
    const refused = await patch(thread.id, { summaryPrompt: prompt });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN');
    const set = await patch(thread.id, { summaryPrompt: prompt }, await adminToken(server.app));
    expect(set.status).toBe(200);
    expect(((await set.json()) as ThreadMemorySettingsDto).summaryPrompt).toBe(prompt);
    const before = server.stub.requests.length;
    for (let turn = 1; turn <= 4; turn += 1)
      await kit.send(thread.id, `Support turn ${turn}, ticket CODE-${700 + turn}.`);
    await kit.waitForFoldThrough(thread.id, 2);
    const summaries = server.stub.requests.slice(before).filter((request) => request.kind === 'summary');
    expect(summaries.length).toBeGreaterThan(0);
    // The summarizer's system message, or the task of a fold continuing the chat's prompt.
    expect(JSON.stringify(summaries[0]?.body.messages)).toContain('You keep the running summary of this support chat');
  });

  it('never folds a window-only thread: the oldest entries leave the pack instead', async () => {
    const summarized = await kit.createThread('summarized');
    const windowOnly = await kit.createThread('window only');
    const response = await patch(windowOnly.id, { memory: 'window-only' });
    expect(((await response.json()) as ThreadMemorySettingsDto).thread.memoryMode).toBe('window-only');
    const filler = 'We discuss the migration plan in some detail here, step by step. '.repeat(5);
    for (let turn = 1; turn <= 9; turn += 1) {
      await kit.send(summarized.id, `Turn ${turn} CODE-${800 + turn}: ${filler}`);
      await kit.send(windowOnly.id, `Turn ${turn} CODE-${800 + turn}: ${filler}`);
    }
    // The control thread folds under the same policy ...
    await kit.waitForFoldThrough(summarized.id, 2);
    // ... the window-only one never does, even when the sweeper looks for due folds.
    await server.app.application.sweeper.sweep();
    await waitForIdleSummaryQueue(server.app);
    expect(
      await query(server.app, 'SELECT revision FROM summary_revisions WHERE thread_id = $1', [windowOnly.id]),
    ).toEqual([]);
    const detail = await kit.detail(windowOnly.id);
    expect(detail.context).toMatchObject({ revision: 0, coveredThroughSeq: 0, windowEntries: 18, foldPending: false });
    const pack = await kit.context(windowOnly.id);
    expect(pack.omitted).toBeGreaterThan(0);
    expect(pack.tokens).toBeLessThanOrEqual(900);
    expect(pack.messages.map((message) => message.content)).toContain(OMITTED_NOTE_WINDOW_ONLY);
    expect(pack.messages.at(-1)?.seq).toBe(18);
  });
});
