import { describe, expect, it } from 'vitest';
import type { ContextResetResponseDto } from '../../src/shared/api';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import { replyWithText } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { useChatServer } from '../support/chat-server';
import { memoryKit, recordEvents, leadingText } from './memory-test-kit';

describe('a fresh context with the same scrollback, through REST', () => {
  const server = useChatServer({
    stub: { classifyRequest, responder: summaryResponder({ chat: () => replyWithText('noted') }) },
    env: { SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2' },
  });
  const kit = memoryKit(server);

  const reset = (threadId: string, method: 'POST' | 'DELETE') =>
    server.app.api(`/api/threads/${threadId}/context-reset`, { method, token: server.token });

  it('hides everything before the marker from the model while the transcript keeps it; undo until the next message', async () => {
    const thread = await kit.createThread();
    for (let turn = 1; turn <= 4; turn += 1)
      await kit.send(thread.id, `Earlier turn ${turn}: remember CODE-${300 + turn}.`);
    await kit.waitForFoldThrough(thread.id, 2);
    const pinned = (await kit.transcript(thread.id)).find((message) => message.seq === 7);
    expect(
      (
        await server.app.api(`/api/threads/${thread.id}/messages/${pinned?.id}/pin`, {
          method: 'POST',
          token: server.token,
        })
      ).status,
    ).toBe(200);
    const before = await kit.context(thread.id);
    expect(leadingText(before)).toContain('CODE-301');
    expect(before.pinnedSeqs).toEqual([7]);

    const recorder = recordEvents(server.app, thread.id);
    const started = await reset(thread.id, 'POST');
    expect(started.status).toBe(201);
    const marker = (await started.json()) as ContextResetResponseDto;
    expect(marker).toMatchObject({ seq: 9, thread: { contextStartSeq: 9 } });
    expect(recorder.events).toContainEqual({ type: 'context-reset', threadId: thread.id, seq: 9 });
    expect(recorder.events).toContainEqual(
      expect.objectContaining({ type: 'thread-updated', thread: expect.objectContaining({ contextStartSeq: 9 }) }),
    );
    const fresh = await kit.context(thread.id);
    expect(fresh.messages).toHaveLength(1);
    expect(leadingText(fresh)).not.toContain('Summary');
    expect(fresh.pinnedSeqs).toEqual([]);

    // Undo restores the summary, the pin and the window.
    const undone = await reset(thread.id, 'DELETE');
    expect(undone.status).toBe(200);
    expect(((await undone.json()) as ContextResetResponseDto).seq).toBe(1);
    expect(recorder.events).toContainEqual({ type: 'context-reset', threadId: thread.id, seq: 1 });
    const restored = await kit.context(thread.id);
    expect(restored.messages.map((message) => message.content)).toEqual(
      before.messages.map((message) => message.content),
    );
    expect(restored.pinnedSeqs).toEqual([7]);

    // Again, then a message: the model sees only what follows the marker, and the reset can no longer be undone.
    expect((await reset(thread.id, 'POST')).status).toBe(201);
    const chatsBefore = server.stub.requests.filter((request) => request.kind === 'chat').length;
    await kit.send(thread.id, 'A new topic: what should we plan next?');
    const chats = server.stub.requests.filter((request) => request.kind === 'chat').slice(chatsBefore);
    expect(chats).toHaveLength(1);
    const seen = chats[0]?.body.messages.map((message) => wireContentText(message.content)) ?? [];
    expect(seen).toHaveLength(2);
    expect(seen[1]).toBe('A new topic: what should we plan next?');
    expect(seen.join('\n')).not.toMatch(/CODE-30\d|Earlier turn|noted/);
    const tooLate = await reset(thread.id, 'DELETE');
    expect(tooLate.status).toBe(409);
    expect(((await tooLate.json()) as { error: { code: string } }).error.code).toBe('CONFLICT');

    // The transcript is unchanged and complete; the marker is on the thread.
    const transcript = await kit.transcript(thread.id);
    expect(transcript.map((message) => message.seq)).toEqual(Array.from({ length: 10 }, (_, index) => index + 1));
    expect(transcript[0]?.content).toBe('Earlier turn 1: remember CODE-301.');
    expect((await kit.detail(thread.id)).contextStartSeq).toBe(9);

    // Later folds summarize only what follows the marker.
    const summariesBefore = server.stub.requests.filter((request) => request.kind === 'summary').length;
    for (let turn = 1; turn <= 3; turn += 1) await kit.send(thread.id, `Fresh turn ${turn}: CODE-${900 + turn}.`);
    await kit.waitForFoldThrough(thread.id, 11);
    const summaries = server.stub.requests.filter((request) => request.kind === 'summary').slice(summariesBefore);
    expect(summaries.length).toBeGreaterThan(0);
    for (const request of summaries) expect(JSON.stringify(request.body)).not.toMatch(/CODE-30\d|Earlier turn/);
    expect(leadingText(await kit.context(thread.id))).toContain('CODE-901');
    recorder.stop();
  });
});
