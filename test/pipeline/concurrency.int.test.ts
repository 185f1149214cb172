import { describe, expect, it } from 'vitest';
import type { MessageDto, SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { lastUserText, replyWithText, type StubResponder } from '../support/openai-stub';
import { waitFor } from '../support/wait-for';

const DELAY_MS = 400;

/** Every answer takes DELAY_MS before its first byte, so overlapping turns would show. */
const delayedAnswer: StubResponder = (request) =>
  replyWithText(`answer to ${lastUserText(request.body)}`, { firstByteDelayMs: DELAY_MS });

/** A promise the test resolves when it chooses (idempotent). */
function newGate(): { opened: Promise<void>; open: () => void } {
  let open = () => undefined as void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open: () => open() };
}

describe('turn serialization', () => {
  const server = useChatServer({ stub: { responder: delayedAnswer } });

  const newThread = async () =>
    (await (
      await server.app.api('/api/threads', { method: 'POST', token: server.token, json: {} })
    ).json()) as ThreadDto;
  const send = (threadId: string, content: string) =>
    server.app.api(`/api/threads/${threadId}/messages`, { method: 'POST', token: server.token, json: { content } });

  it('runs two concurrent sends to one thread as two complete turns, one after the other', async () => {
    const thread = await newThread();
    const [first, second] = await Promise.all([send(thread.id, 'first question'), send(thread.id, 'second question')]);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    const bodies = [(await first.json()) as SendMessageResponseDto, (await second.json()) as SendMessageResponseDto];
    for (const body of bodies) {
      expect(body.turn.status).toBe('complete');
      expect(body.messages.at(-1)?.content).toBe(`answer to ${body.userMessage.content}`);
    }
    const page = (await (
      await server.app.api(`/api/threads/${thread.id}/messages`, { token: server.token })
    ).json()) as { messages: MessageDto[] };
    const roles = page.messages.map((message) => `${message.seq}:${message.role}`);
    expect(roles).toEqual(['1:user', '2:assistant', '3:user', '4:assistant']);
    // Each answer directly follows its own question, and the second turn's request saw the first turn whole.
    expect(page.messages[1]?.content).toBe(`answer to ${page.messages[0]?.content}`);
    expect(page.messages[3]?.content).toBe(`answer to ${page.messages[2]?.content}`);
    const secondRequest = server.stub.requests.find(
      (request) => lastUserText(request.body) === page.messages[2]?.content,
    );
    expect(secondRequest?.body.messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
    ]);
  });

  it('runs sends to 20 threads in parallel without serializing them', async () => {
    // Every model request is held until all 20 have arrived: serialized turns would never get there.
    const count = 20;
    const gate = newGate();
    let openedBy: 'all arrived' | 'timeout' | null = null;
    const arrived = () => server.stub.requests.filter((request) => lastUserText(request.body).startsWith('parallel '));
    server.stub.setResponder(async (request) => {
      if (arrived().length >= count) {
        openedBy ??= 'all arrived';
        gate.open();
      }
      await gate.opened;
      return replyWithText(`answer to ${lastUserText(request.body)}`);
    });
    const timer = setTimeout(() => {
      openedBy ??= 'timeout';
      gate.open();
    }, 20_000);
    try {
      const threads = await Promise.all(Array.from({ length: count }, () => newThread()));
      const responses = await Promise.all(threads.map((thread, index) => send(thread.id, `parallel ${index}`)));
      expect(openedBy).toBe('all arrived');
      expect(responses.every((response) => response.status === 201)).toBe(true);
      expect(arrived()).toHaveLength(count);
    } finally {
      clearTimeout(timer);
      gate.open();
      server.stub.setResponder(delayedAnswer);
    }
  });

  it('refuses a send beyond the queue bound with BUSY and stores nothing for it', async () => {
    // The first turn's model request is held until the refusals are back: no turn ends while the eight sends arrive.
    const gate = newGate();
    server.stub.setResponder(async (request) => {
      await gate.opened;
      return replyWithText(`answer to ${lastUserText(request.body)}`);
    });
    let sends: Promise<number>[] = [];
    try {
      const thread = await newThread();
      const statuses: number[] = [];
      sends = Array.from({ length: 8 }, async (_, index) => {
        const { status } = await send(thread.id, `queued ${index}`);
        statuses.push(status);
        return status;
      });
      try {
        await waitFor(() => statuses.filter((status) => status === 409).length >= 2, {
          timeoutMs: 15_000,
          what: 'two sends refused while the first turn is held',
        });
      } finally {
        gate.open();
      }
      const all = await Promise.all(sends);
      // One running turn plus MAX_QUEUED_TURNS (5) waiting are accepted; the rest get 409 BUSY.
      expect(all.filter((status) => status === 201)).toHaveLength(6);
      expect(all.filter((status) => status === 409)).toHaveLength(2);
      const page = (await (
        await server.app.api(`/api/threads/${thread.id}/messages`, { token: server.token })
      ).json()) as { messages: MessageDto[] };
      expect(page.messages.filter((message) => message.role === 'user')).toHaveLength(6);
    } finally {
      gate.open();
      // Every send answered before the next case (a failed case leaves none running).
      await Promise.allSettled(sends);
      server.stub.setResponder(delayedAnswer);
    }
  });
});
