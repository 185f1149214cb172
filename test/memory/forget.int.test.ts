import { describe, expect, it } from 'vitest';
import { MEMORY_REBUILDING_NOTE } from '../../src/core/domain/types';
import type { ForgetResponseDto, ThreadDto } from '../../src/shared/api';
import { classifyRequest, heldSummaryResponder } from '../support/summary-stub';
import { useChatServer } from '../support/chat-server';
import { waitFor } from '../support/wait-for';
import { memoryKit, query, recordEvents, waitForIdleSummaryQueue, leadingText } from './memory-test-kit';

const SECRET = 'CODE-4242';

describe('forgetting a message through REST', () => {
  /** Summarizer calls wait while held: the withdrawn state can be observed before the rebuild commits. */
  const summaries = heldSummaryResponder();

  const server = useChatServer({
    stub: { classifyRequest, responder: summaries.responder },
    env: { SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2' },
  });
  const kit = memoryKit(server);

  it('erases a message and its answer everywhere, and no later model request ever contains it', async () => {
    const thread = await kit.createThread();
    await kit.send(thread.id, 'Before anything: my API key is CODE-1001.');
    const secret = await kit.send(thread.id, `Please remember my locker code ${SECRET} for later.`);
    for (let turn = 1; turn <= 3; turn += 1) await kit.send(thread.id, `Turn ${turn}: note CODE-${2000 + turn}.`);
    await kit.waitForFoldThrough(thread.id, 4);
    expect((await kit.context(thread.id)).summary?.text).toContain(SECRET);

    const recorder = recordEvents(server.app, thread.id);
    summaries.hold();
    const mark = server.stub.requests.length;
    const response = await server.app.api(`/api/threads/${thread.id}/messages/${secret.userMessage.id}`, {
      method: 'DELETE',
      token: server.token,
    });
    expect(response.status).toBe(200);
    const forgotten = (await response.json()) as ForgetResponseDto;
    expect(forgotten.memoryRebuilding).toBe(true);
    expect(forgotten.messages.map((message) => [message.seq, message.role, message.deleted, message.content])).toEqual([
      [3, 'user', true, ''],
      [4, 'assistant', true, ''],
    ]);
    expect(
      recorder.events
        .filter((event) => event.type === 'message-updated')
        .map((event) => event.type === 'message-updated' && event.message.seq),
    ).toEqual([3, 4]);
    expect(recorder.events).toContainEqual(
      expect.objectContaining({ type: 'thread-updated', thread: expect.objectContaining({ memoryRebuilding: true }) }),
    );

    // Withdrawn at once: the pack says memory is being rebuilt instead of carrying the old summary.
    const withdrawn = await kit.context(thread.id);
    expect(leadingText(withdrawn)).toContain(MEMORY_REBUILDING_NOTE);
    expect(JSON.stringify(withdrawn)).not.toContain(SECRET);
    await kit.send(thread.id, 'While you rebuild: what do you remember?');
    summaries.release();

    // The rebuild commits from the remaining transcript.
    await waitFor(async () => !((await kit.detail(thread.id)) as ThreadDto).memoryRebuilding, {
      timeoutMs: 30_000,
      what: 'the summary rebuild',
    });
    const rebuilt = await kit.context(thread.id);
    expect(rebuilt.summary?.text).toContain('CODE-1001');
    expect(rebuilt.summary?.text).not.toContain(SECRET);
    expect(recorder.events).toContainEqual(
      expect.objectContaining({ type: 'thread-updated', thread: expect.objectContaining({ memoryRebuilding: false }) }),
    );

    // More turns and folds: still nothing of it reaches the model, summarizer calls included.
    for (let turn = 4; turn <= 8; turn += 1) await kit.send(thread.id, `Turn ${turn}: note CODE-${2000 + turn}.`);
    await kit.waitForFoldThrough(thread.id, 16);
    await waitForIdleSummaryQueue(server.app);
    const later = server.stub.requests.slice(mark);
    expect(later.filter((request) => request.kind === 'summary').length).toBeGreaterThan(1);
    expect(later.filter((request) => request.kind === 'chat').length).toBe(6);
    for (const request of later) expect(JSON.stringify(request.body)).not.toContain(SECRET);

    // Postgres keeps no copy: transcript, window, summaries (tainted revisions redacted, metadata kept).
    const transcript = await kit.transcript(thread.id);
    expect(transcript.find((message) => message.seq === 3)).toMatchObject({ role: 'user', deleted: true, content: '' });
    const copies = await query<{ count: string }>(
      server.app,
      `
      SELECT (SELECT count(*) FROM messages WHERE content LIKE $2 AND thread_id = $1)
           + (SELECT count(*) FROM context_entries WHERE content LIKE $2 AND thread_id = $1)
           + (SELECT count(*) FROM summary_revisions WHERE text LIKE $2 AND thread_id = $1)
           + (SELECT count(*) FROM threads WHERE summary_text LIKE $2 AND id = $1) AS count`,
      [thread.id, `%${SECRET}%`],
    );
    expect(copies[0]?.count).toBe('0');
    const revisions = await query<{
      revision: number;
      author: string;
      redacted: boolean;
      text: string;
      from_seq: number;
      through_seq: number;
    }>(
      server.app,
      'SELECT revision, author, redacted_at IS NOT NULL AS redacted, text, from_seq, through_seq FROM summary_revisions WHERE thread_id = $1 ORDER BY revision',
      [thread.id],
    );
    const tainted = revisions.filter((revision) => revision.redacted);
    expect(tainted.length).toBeGreaterThan(0);
    for (const revision of tainted) expect(revision).toMatchObject({ text: '', author: 'fold' });
    expect(revisions.find((revision) => revision.author === 'rebuild')).toMatchObject({ redacted: false, from_seq: 1 });
    recorder.stop();
  });

  it('forgets only the one message with only=true, and leaves an unsummarized message out of the window', async () => {
    const thread = await kit.createThread();
    const asked = await kit.send(thread.id, 'My phone is CODE-5555.');
    const response = await server.app.api(`/api/threads/${thread.id}/messages/${asked.userMessage.id}?only=true`, {
      method: 'DELETE',
      token: server.token,
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as ForgetResponseDto;
    expect(body.memoryRebuilding).toBe(false);
    expect(body.messages.map((message) => message.seq)).toEqual([1]);
    const transcript = await kit.transcript(thread.id);
    expect(transcript.map((message) => [message.seq, message.deleted])).toEqual([
      [1, true],
      [2, false],
    ]);
    const pack = await kit.context(thread.id);
    expect(pack.messages.map((message) => message.seq)).toEqual([undefined, 2]);
    // A stranger cannot forget anything here.
    const stranger = await server.guest();
    expect(
      (
        await server.app.api(`/api/threads/${thread.id}/messages/${asked.messages[0]?.id}`, {
          method: 'DELETE',
          token: stranger.token,
        })
      ).status,
    ).toBe(404);
  });
});
