import { describe, expect, it } from 'vitest';
import type { MessageDto, ThreadDto } from '../../src/shared/api';
import type { ThreadJoinResult } from '../../src/shared/socket-events';
import { eventsOf, type Tab } from '../support/socket-client';
import { classifyRequest, heldSummaryResponder } from '../support/summary-stub';
import { useChatServer } from '../support/chat-server';
import { waitFor } from '../support/wait-for';
import { memoryKit } from './memory-test-kit';

/** The payload keys of each memory-control event, as src/shared/socket-events.ts declares them. */
const PAYLOAD_KEYS = {
  'message-updated': ['message', 'threadId'],
  'thread-updated': ['thread', 'threadId'],
  'context-reset': ['seq', 'threadId'],
  'summary-updated': ['coveredThroughSeq', 'revision', 'threadId', 'tokens'],
} as const;

type ControlEvent = keyof typeof PAYLOAD_KEYS;

/**
 * The memory controls change live state: each control's event reaches every tab of the thread over real sockets
 * (a second tab of the same user here, the controls driven over REST from "the first tab"), with the payload the
 * socket event maps declare, and never a tab of someone else.
 */
describe('memory controls over sockets', () => {
  /** Summarizer calls wait while held: the withdrawn state can be observed before the rebuild commits. */
  const summaries = heldSummaryResponder();

  const server = useChatServer({
    stub: { classifyRequest, responder: summaries.responder },
    env: { SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2' },
  });
  const kit = memoryKit(server);

  /** A second tab of the user, joined to the thread. */
  const joinedTab = async (threadId: string, as = server.token): Promise<Tab> => {
    const tab = await server.openTab(as);
    const { response } = await tab.request<ThreadJoinResult>('thread-join', { threadId });
    if (!response.ok) throw new Error(`join failed: ${response.error.code}`);
    return tab;
  };
  /** Waits for an event of `type` after index `from` matching `check`; checks its payload shape; returns it. */
  const received = async (
    tab: Tab,
    type: ControlEvent,
    check: (payload: Record<string, unknown>) => boolean,
    from = 0,
  ) => {
    await waitFor(() => eventsOf(tab, type, from).some(check), {
      timeoutMs: 30_000,
      what: `${type} on the second tab`,
    });
    const payload = eventsOf(tab, type, from).find(check)!;
    expect(Object.keys(payload).sort()).toEqual([...PAYLOAD_KEYS[type]]);
    return payload;
  };
  const messageOf = (payload: Record<string, unknown>) => payload.message as MessageDto;
  const threadOf = (payload: Record<string, unknown>) => payload.thread as ThreadDto;
  const call = async (path: string, method: string, json?: unknown) => {
    const response = await server.app.api(path, {
      method,
      token: server.token,
      ...(json !== undefined ? { json } : {}),
    });
    expect(response.status, await response.clone().text()).toBeLessThan(300);
    return response;
  };

  it('pin and unpin, settings and rename reach the other tab; a stranger hears nothing', async () => {
    const thread = await kit.createThread('live controls');
    const { userMessage } = await kit.send(thread.id, 'Pin me: CODE-700.');
    const other = await joinedTab(thread.id);
    const stranger = await server.openTab((await server.guest()).token);
    const refused = await stranger.request<ThreadJoinResult>('thread-join', { threadId: thread.id });
    expect(refused.response.ok).toBe(false);

    await call(`/api/threads/${thread.id}/messages/${userMessage.id}/pin`, 'POST');
    const pinned = await received(
      other,
      'message-updated',
      (payload) => messageOf(payload).id === userMessage.id && messageOf(payload).pinned,
    );
    expect(pinned.threadId).toBe(thread.id);
    expect(messageOf(pinned)).toMatchObject({
      seq: 1,
      role: 'user',
      content: 'Pin me: CODE-700.',
      pinned: true,
      deleted: false,
    });

    const mark = other.events.length;
    await call(`/api/threads/${thread.id}/messages/${userMessage.id}/pin`, 'DELETE');
    await received(
      other,
      'message-updated',
      (payload) => messageOf(payload).id === userMessage.id && !messageOf(payload).pinned,
      mark,
    );

    await call(`/api/threads/${thread.id}/settings`, 'PATCH', { keep: 'messages=3', memory: 'window-only' });
    const settings = await received(
      other,
      'thread-updated',
      (payload) => threadOf(payload).settings.keep === 'messages=3',
    );
    expect(threadOf(settings)).toMatchObject({
      id: thread.id,
      memoryMode: 'window-only',
      settings: { keep: 'messages=3', trigger: null },
    });

    await call(`/api/threads/${thread.id}`, 'PATCH', { title: 'renamed live' });
    const renamed = await received(other, 'thread-updated', (payload) => threadOf(payload).title === 'renamed live');
    expect(threadOf(renamed).memoryMode).toBe('window-only');

    expect(stranger.events).toEqual([]);
  });

  it('a fresh context and its undo send context-reset {threadId, seq} to the other tab', async () => {
    const thread = await kit.createThread();
    await kit.send(thread.id, 'Before the marker.');
    const other = await joinedTab(thread.id);

    await call(`/api/threads/${thread.id}/context-reset`, 'POST');
    const reset = await received(other, 'context-reset', (payload) => payload.seq === 3);
    expect(reset).toEqual({ threadId: thread.id, seq: 3 });
    await received(other, 'thread-updated', (payload) => threadOf(payload).contextStartSeq === 3);

    const mark = other.events.length;
    await call(`/api/threads/${thread.id}/context-reset`, 'DELETE');
    expect(await received(other, 'context-reset', (payload) => payload.seq === 1, mark)).toEqual({
      threadId: thread.id,
      seq: 1,
    });
    await received(other, 'thread-updated', (payload) => threadOf(payload).contextStartSeq === 1, mark);
  });

  it('regenerate marks the replaced answer superseded on the other tab, which also sees the new answer stream', async () => {
    const thread = await kit.createThread();
    const asked = await kit.send(thread.id, 'Say something about CODE-800.');
    const replaced = asked.messages[0] as MessageDto;
    const other = await joinedTab(thread.id);

    const response = await call(`/api/threads/${thread.id}/regenerate`, 'POST');
    const body = (await response.json()) as { messages: MessageDto[] };
    const superseded = await received(other, 'message-updated', (payload) => messageOf(payload).id === replaced.id);
    expect(messageOf(superseded)).toMatchObject({ seq: 2, superseded: true, content: replaced.content });
    const fresh = body.messages[0] as MessageDto;
    expect(fresh.seq).toBe(3);
    await waitFor(() => eventsOf(other, 'message-end').some((payload) => messageOf(payload).id === fresh.id), {
      timeoutMs: 30_000,
      what: 'the new answer on the other tab',
    });
  });

  it('forget sends tombstones and the rebuilding state, then summary-updated once the rebuild commits', async () => {
    const thread = await kit.createThread();
    await kit.send(thread.id, 'Keep CODE-901 in mind.');
    const secret = await kit.send(thread.id, 'Forget this later: CODE-902.');
    for (let turn = 1; turn <= 3; turn += 1) await kit.send(thread.id, `Turn ${turn}: CODE-${910 + turn}.`);
    await kit.waitForFoldThrough(thread.id, 4);
    const other = await joinedTab(thread.id);

    summaries.hold();
    try {
      await call(`/api/threads/${thread.id}/messages/${secret.userMessage.id}`, 'DELETE');
      const tombstones = [secret.userMessage.id, secret.messages[0]!.id];
      for (const id of tombstones) {
        const payload = await received(other, 'message-updated', (candidate) => messageOf(candidate).id === id);
        expect(messageOf(payload)).toMatchObject({ deleted: true, content: '' });
        expect(JSON.stringify(payload)).not.toContain('CODE-902');
      }
      await received(other, 'thread-updated', (payload) => threadOf(payload).memoryRebuilding);
      // Nothing commits while the summarizer is held.
      expect(eventsOf(other, 'summary-updated')).toEqual([]);
    } finally {
      summaries.release();
    }
    const summary = await received(other, 'summary-updated', () => true);
    expect(summary).toMatchObject({
      threadId: thread.id,
      revision: expect.any(Number),
      coveredThroughSeq: expect.any(Number),
      tokens: expect.any(Number),
    });
    expect(summary.coveredThroughSeq as number).toBeGreaterThanOrEqual(4);
    await received(other, 'thread-updated', (payload) => !threadOf(payload).memoryRebuilding);
    const types = other.events.map((event) => event.type);
    expect(types.indexOf('summary-updated')).toBeGreaterThan(types.indexOf('message-updated'));
  });
});
