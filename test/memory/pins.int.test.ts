import { describe, expect, it } from 'vitest';
import type { PinResponseDto } from '../../src/shared/api';
import { replyWithText, type OpenAIStub } from '../support/openai-stub';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import { classifyRequest, summarizedText, summaryResponder } from '../support/summary-stub';
import { useChatServer } from '../support/chat-server';
import { waitFor } from '../support/wait-for';
import { adminToken, memoryKit, recordEvents } from './memory-test-kit';

const chatTexts = (stub: OpenAIStub) =>
  stub.requests
    .filter((request) => request.kind === 'chat')
    .map((request) =>
      request.body.messages.map((message) => ({ role: message.role, text: wireContentText(message.content) })),
    );

describe('pinned messages through REST', () => {
  const server = useChatServer({
    stub: { classifyRequest, responder: summaryResponder({ chat: () => replyWithText('noted') }) },
    env: { SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2', PINNED_MAX_TOKENS: '120' },
  });
  const kit = memoryKit(server);

  it('keeps a pinned message in every pack through folds, right after the summary, and folds it once unpinned', async () => {
    const thread = await kit.createThread();
    const recorder = recordEvents(server.app, thread.id);
    const first = await kit.send(thread.id, 'Please keep this in mind: the launch password is ZEBRA-42.');
    const pin = await server.app.api(`/api/threads/${thread.id}/messages/${first.userMessage.id}/pin`, {
      method: 'POST',
      token: server.token,
    });
    expect(pin.status).toBe(200);
    const pinned = (await pin.json()) as PinResponseDto;
    expect(pinned.messages.map((message) => [message.id, message.pinned])).toEqual([[first.userMessage.id, true]]);
    expect(pinned.pinnedTokens).toBeGreaterThan(0);
    expect(recorder.events).toContainEqual(
      expect.objectContaining({
        type: 'message-updated',
        message: expect.objectContaining({ id: first.userMessage.id, pinned: true }),
      }),
    );

    for (let turn = 1; turn <= 6; turn += 1) await kit.send(thread.id, `Turn ${turn}: CODE-${500 + turn} is noted.`);
    await kit.waitForFoldThrough(thread.id, 6);
    await kit.send(thread.id, 'What is the launch password?');

    // The last chat request: system (with the summary), the pinned message, then the window.
    const last = chatTexts(server.stub).at(-1) ?? [];
    expect(last[0]?.role).toBe('system');
    expect(last[0]?.text).toContain('Summary of the conversation so far');
    expect(last[0]?.text).not.toContain('ZEBRA-42');
    expect(last[1]).toEqual({ role: 'user', text: 'Please keep this in mind: the launch password is ZEBRA-42.' });
    expect(last.filter((message) => message.text.includes('ZEBRA-42'))).toHaveLength(1);
    expect((await kit.context(thread.id)).pinnedSeqs).toEqual([1]);

    // Unpinned: back in the flow; older than the window, so the next fold takes it into the summary. Counted from
    // before the unpin: a fold already under way may send its summarizer request right after it.
    const summaryCallsBefore = server.stub.requests.filter((request) => request.kind === 'summary').length;
    const unpin = await server.app.api(`/api/threads/${thread.id}/messages/${first.userMessage.id}/pin`, {
      method: 'DELETE',
      token: server.token,
    });
    expect(unpin.status).toBe(200);
    expect(((await unpin.json()) as PinResponseDto).messages[0]?.pinned).toBe(false);
    expect(recorder.events).toContainEqual(
      expect.objectContaining({
        type: 'message-updated',
        message: expect.objectContaining({ id: first.userMessage.id, pinned: false }),
      }),
    );
    const context = await kit.context(thread.id);
    expect(context.pinnedSeqs).toEqual([]);
    expect(context.window.fromSeq).toBe(1);
    for (let turn = 7; turn <= 9; turn += 1) await kit.send(thread.id, `Turn ${turn}: CODE-${500 + turn} is noted.`);
    await waitFor(async () => ((await kit.context(thread.id)).window.fromSeq ?? 0) > 1, {
      timeoutMs: 30_000,
      what: 'the unpinned message to be folded',
    });
    const laterSummaries = server.stub.requests
      .filter((request) => request.kind === 'summary')
      .slice(summaryCallsBefore);
    expect(laterSummaries.some((request) => summarizedText(request.body).includes('Please keep this in mind'))).toBe(
      true,
    );
    recorder.stop();
  });

  it('refuses a pin past PINNED_MAX_TOKENS with a clear error, and lets an admin pin in any thread', async () => {
    const thread = await kit.createThread();
    const small = await kit.send(thread.id, 'A short fact: the office is on floor 3.');
    const large = await kit.send(
      thread.id,
      `A long note: ${'the quarterly plan covers hiring, budget and roadmap items. '.repeat(12)}`,
    );
    expect(
      (
        await server.app.api(`/api/threads/${thread.id}/messages/${small.userMessage.id}/pin`, {
          method: 'POST',
          token: server.token,
        })
      ).status,
    ).toBe(200);
    const refused = await server.app.api(`/api/threads/${thread.id}/messages/${large.userMessage.id}/pin`, {
      method: 'POST',
      token: server.token,
    });
    expect(refused.status).toBe(409);
    const body = (await refused.json()) as {
      error: { code: string; message: string; pinnedMaxTokens: number; pinnedTokens: number };
    };
    expect(body.error.code).toBe('CONFLICT');
    expect(body.error.message).toMatch(/tokens allowed for pinned messages.*Unpin something first/);
    expect(body.error.pinnedMaxTokens).toBe(120);
    expect((await kit.context(thread.id)).pinnedSeqs).toEqual([1]);

    // Another user cannot; an admin (JWT with role admin) can act on the thread.
    const stranger = await server.guest();
    expect(
      (
        await server.app.api(`/api/threads/${thread.id}/messages/${small.userMessage.id}/pin`, {
          method: 'DELETE',
          token: stranger.token,
        })
      ).status,
    ).toBe(404);
    const admin = await adminToken(server.app);
    const unpinned = await server.app.api(`/api/threads/${thread.id}/messages/${small.userMessage.id}/pin`, {
      method: 'DELETE',
      token: admin,
    });
    expect(unpinned.status).toBe(200);
    expect(((await unpinned.json()) as PinResponseDto).pinnedTokens).toBe(0);
  });
});
