import { describe, expect, it, onTestFinished } from 'vitest';
import type { MessageDto, ThreadDto } from '../../src/shared/api';
import { applyMessageDelta } from '../../src/shared/apply-message-delta';
import type { ThreadJoinResult } from '../../src/shared/socket-events';
import { useChatServer } from '../support/chat-server';
import { lastUserText, replyWithText } from '../support/openai-stub';
import { eventsOf, type Tab } from '../support/socket-client';
import { waitFor } from '../support/wait-for';

/** The stub's answer: 40 words, streamed one word a chunk; questions starting with "slow" stream slowly. */
function answerFor(question: string): string {
  return `Answer to "${question}": ${Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ')}.`;
}

type Sent = { message: MessageDto; turnId: string; duplicate: boolean };

/** The deltas of a message from event index `from`, checked contiguous from `start`; returns the text they add to `initial`. */
function reassemble(tab: Tab, messageId: string, options: { from?: number; initial?: string } = {}): string {
  let text = options.initial ?? '';
  for (const delta of eventsOf(tab, 'message-delta', options.from ?? 0).filter(
    (payload) => payload.messageId === messageId,
  )) {
    const next = applyMessageDelta(text, delta as { offset: number; delta: string });
    if (next === null) throw new Error(`gap: delta at ${String(delta.offset)} after ${text.length} characters`);
    text = next;
  }
  return text;
}

describe('socket.io streaming', () => {
  const server = useChatServer({
    stub: {
      responder: (request) => {
        const question = lastUserText(request.body);
        return replyWithText(answerFor(question), { chunkDelayMs: question.startsWith('slow') ? 80 : 3 });
      },
    },
  });

  const tab = (as?: string) => server.openTab(as);
  const newThread = async () =>
    (await (
      await server.app.api('/api/threads', { method: 'POST', token: server.token, json: {} })
    ).json()) as ThreadDto;
  const join = async (on: Tab, threadId: string, afterSeq?: number) => {
    const { response, ackIndex } = await on.request<ThreadJoinResult>('thread-join', {
      threadId,
      ...(afterSeq !== undefined ? { afterSeq } : {}),
    });
    if (!response.ok) throw new Error(`join failed: ${response.error.code} ${response.error.message}`);
    return { ...response, ackIndex };
  };
  const send = async (
    on: Tab,
    threadId: string,
    content: string,
    clientMessageId = `c-${Math.random().toString(36).slice(2)}`,
  ) => {
    const { response } = await on.request<Sent>('message-send', { threadId, content, clientMessageId });
    if (!response.ok) throw new Error(`send failed: ${response.error.code} ${response.error.message}`);
    return response;
  };
  const turnEnded = (on: Tab, turnId: string) =>
    waitFor(() => eventsOf(on, 'turn-end').some((event) => event.turnId === turnId), {
      timeoutMs: 30_000,
      what: `turn ${turnId} to end`,
    });
  const transcript = async (threadId: string) =>
    (
      (await (await server.app.api(`/api/threads/${threadId}/messages?limit=200`, { token: server.token })).json()) as {
        messages: MessageDto[];
      }
    ).messages;

  it('streams a turn to two tabs of the same user: start, ordered deltas that add up to the answer, end', async () => {
    const thread = await newThread();
    const [first, second] = [await tab(), await tab()];
    await join(first, thread.id);
    await join(second, thread.id);

    const sent = await send(first, thread.id, 'hello from tab one');
    expect(sent.message).toMatchObject({ role: 'user', content: 'hello from tab one', threadId: thread.id });
    expect(sent.duplicate).toBe(false);
    await turnEnded(first, sent.turnId);
    await turnEnded(second, sent.turnId);

    for (const view of [first, second]) {
      expect(eventsOf(view, 'message-created').map((event) => (event.message as MessageDto).id)).toEqual([
        sent.message.id,
      ]);
      const starts = eventsOf(view, 'message-start');
      const ends = eventsOf(view, 'message-end');
      expect(starts).toHaveLength(1);
      expect(ends).toHaveLength(1);
      const answer = ends[0]!.message as MessageDto;
      expect(answer).toMatchObject({ role: 'assistant', status: 'complete', content: answerFor('hello from tab one') });
      expect((starts[0]!.message as MessageDto).id).toBe(answer.id);
      // Ordered: each delta starts exactly where the previous one ended, none repeated.
      const deltas = eventsOf(view, 'message-delta').filter((event) => event.messageId === answer.id);
      // Several frames (a fast stream's deltas share frames: the next test counts them).
      expect(deltas.length).toBeGreaterThan(1);
      let length = 0;
      for (const delta of deltas) {
        expect(delta.offset).toBe(length);
        length += (delta.delta as string).length;
      }
      expect(reassemble(view, answer.id)).toBe(answer.content);
      expect(eventsOf(view, 'turn-end')).toEqual([{ threadId: thread.id, turnId: sent.turnId, status: 'complete' }]);
      // start, deltas, end, in that order.
      const types = view.events.map((event) => event.type);
      expect(types.indexOf('message-start')).toBeLessThan(types.indexOf('message-delta'));
      expect(types.lastIndexOf('message-delta')).toBeLessThan(types.indexOf('message-end'));
    }
  });

  it('sends a fast stream in fewer frames than deltas and a slow one a frame per delta, the same text to WebSocket, polling and upgrading tabs', async () => {
    const tabs = [
      await tab(),
      await server.openTab(undefined, { transports: ['polling'] }),
      await server.openTab(undefined, { transports: ['polling', 'websocket'] }),
    ];
    const frames: Record<string, number> = {};
    // Closed at the end: the user may keep MAX_SOCKETS_PER_USER sockets, and the other tests open theirs.
    onTestFinished(() => {
      for (const view of tabs) view.close();
    });
    for (const question of ['fast answer please', 'slow answer please']) {
      const thread = await newThread();
      for (const view of tabs) await join(view, thread.id);
      const sent = await send(tabs[0]!, thread.id, question);
      for (const view of tabs) await turnEnded(view, sent.turnId);
      const full = answerFor(question);
      const [first, ...others] = tabs.map((view) => {
        const answer = eventsOf(view, 'message-end')
          .map((event) => event.message as MessageDto)
          .find((message) => message.threadId === thread.id)!;
        expect(answer.content).toBe(full);
        expect(reassemble(view, answer.id)).toBe(full);
        const types = view.events.filter((event) => event.payload.threadId === thread.id).map((event) => event.type);
        expect(types.indexOf('message-start')).toBeLessThan(types.indexOf('message-delta'));
        expect(types.lastIndexOf('message-delta')).toBeLessThan(types.indexOf('message-end'));
        expect(types.indexOf('message-end')).toBeLessThan(types.indexOf('turn-end'));
        return eventsOf(view, 'message-delta').filter((event) => event.messageId === answer.id);
      });
      // Every tab, whatever its transport, gets the same frames.
      for (const deltas of others) expect(deltas).toEqual(first);
      frames[question] = first!.length;
    }
    const chunks = answerFor('slow answer please').match(/\S+\s*|\s+/g)!.length;
    // 3 ms apart, the deltas share frames (SOCKET_DELTA_COALESCE_MS, 50 ms); 80 ms apart, each goes out as it
    // comes (at least half of them, allowing for a loaded machine bunching a few).
    expect(frames['fast answer please']).toBeLessThan(chunks / 2);
    expect(frames['slow answer please']).toBeGreaterThanOrEqual(chunks / 2);
  });

  it('catches a reconnecting tab up with afterSeq: exactly the messages it missed', async () => {
    const thread = await newThread();
    const before = await tab();
    await join(before, thread.id);
    const sent = await send(before, thread.id, 'first question');
    await turnEnded(before, sent.turnId);
    const seen = eventsOf(before, 'message-end').map((event) => (event.message as MessageDto).seq!);
    const lastSeq = Math.max(...seen);
    before.close();

    // While the tab is away, two more turns happen over REST.
    for (const question of ['second question', 'third question']) {
      const response = await server.app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token: server.token,
        json: { content: question },
      });
      expect(response.status).toBe(201);
    }

    const after = await tab();
    const joined = await join(after, thread.id, lastSeq);
    const all = await transcript(thread.id);
    expect(all.map((message) => message.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(joined.messages.map((message) => message.seq)).toEqual([3, 4, 5, 6]);
    expect(joined.messages).toEqual(all.filter((message) => message.seq! > lastSeq));
    expect(joined.messages.map((message) => message.content)).toEqual([
      'second question',
      answerFor('second question'),
      'third question',
      answerFor('third question'),
    ]);
    expect(joined.hasMoreBefore).toBe(true);
    expect(joined.hasMoreAfter).toBe(false);

    // Without afterSeq: the newest page.
    const fresh = await join(await tab(), thread.id);
    expect(fresh.messages).toEqual(all);
    expect(fresh.hasMoreBefore).toBe(false);
    expect(fresh.thread.id).toBe(thread.id);
  });

  it('answers a resend with the same clientMessageId with the same message: one turn, one answer', async () => {
    const thread = await newThread();
    const view = await tab();
    await join(view, thread.id);
    const chatRequests = server.stub.requests.length;
    const first = await send(view, thread.id, 'only once please', 'resend-1');
    const again = await send(view, thread.id, 'only once please', 'resend-1');
    expect(again.message.id).toBe(first.message.id);
    expect(again.turnId).toBe(first.turnId);
    expect(again.duplicate).toBe(true);
    await turnEnded(view, first.turnId);
    // A resend after the turn ended is still the same message.
    const late = await send(view, thread.id, 'only once please', 'resend-1');
    expect(late.message.id).toBe(first.message.id);

    const all = await transcript(thread.id);
    expect(all.map((message) => [message.role, message.content])).toEqual([
      ['user', 'only once please'],
      ['assistant', answerFor('only once please')],
    ]);
    expect(server.stub.requests.length - chatRequests).toBe(1);
    expect(eventsOf(view, 'turn-end')).toHaveLength(1);
  });

  it('cancels a turn mid-stream: the partial answer is kept, marked cancelled', async () => {
    const thread = await newThread();
    const view = await tab();
    await join(view, thread.id);
    const sent = await send(view, thread.id, 'slow story please');
    await waitFor(() => eventsOf(view, 'message-delta').length >= 3, { timeoutMs: 20_000, what: 'a few deltas' });
    const { response } = await view.request<{ cancelled: boolean }>('turn-cancel', { threadId: thread.id });
    expect(response).toEqual({ ok: true, cancelled: true });
    await turnEnded(view, sent.turnId);

    expect(eventsOf(view, 'turn-end')).toEqual([{ threadId: thread.id, turnId: sent.turnId, status: 'cancelled' }]);
    const end = eventsOf(view, 'message-end')[0]!.message as MessageDto;
    const full = answerFor('slow story please');
    expect(end.status).toBe('cancelled');
    expect(end.content.length).toBeGreaterThan(0);
    expect(end.content.length).toBeLessThan(full.length);
    expect(full.startsWith(end.content)).toBe(true);
    expect(reassemble(view, end.id)).toBe(end.content);
    const stored = (await transcript(thread.id)).find((message) => message.id === end.id);
    expect(stored).toMatchObject({ status: 'cancelled', content: end.content });

    // Nothing runs any more: a second cancel says so.
    const { response: again } = await view.request<{ cancelled: boolean }>('turn-cancel', { threadId: thread.id });
    expect(again).toEqual({ ok: true, cancelled: false });
  });

  it('gives a tab that joins mid-stream the text so far, then only the later deltas', async () => {
    const thread = await newThread();
    const sender = await tab();
    await join(sender, thread.id);
    const sent = await send(sender, thread.id, 'slow answer to watch');
    await waitFor(() => eventsOf(sender, 'message-delta').length >= 5, {
      timeoutMs: 20_000,
      what: 'the answer to be streaming',
    });

    const late = await tab();
    const joined = await join(late, thread.id);
    const streaming = joined.messages.find((message) => message.role === 'assistant');
    expect(streaming?.status).toBe('streaming');
    const full = answerFor('slow answer to watch');
    expect(streaming!.content.length).toBeGreaterThan(0);
    expect(full.startsWith(streaming!.content)).toBe(true);
    await turnEnded(late, sent.turnId);

    const later = eventsOf(late, 'message-delta', joined.ackIndex).filter((event) => event.messageId === streaming!.id);
    expect(later.length).toBeGreaterThan(0);
    // The first delta after the ack starts exactly where the ack's text ends: no gap, no overlap.
    expect(later[0]!.offset).toBe(streaming!.content.length);
    expect(reassemble(late, streaming!.id, { from: joined.ackIndex, initial: streaming!.content })).toBe(full);
    expect((eventsOf(late, 'message-end')[0]!.message as MessageDto).content).toBe(full);
  });
});
