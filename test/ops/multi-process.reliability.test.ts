import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageDto, ThreadDto } from '../../src/shared/api';
import {
  lastUserText,
  replyWithText,
  replyWithToolCalls,
  startOpenAIStub,
  type OpenAIStub,
  type StubRequest,
} from '../support/openai-stub';
import { eventsOf, openTab, type Tab } from '../support/socket-client';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { waitFor } from '../support/wait-for';
import { prepareProcessStack, type ProcessStack } from '../support/process-stack';
import { startServerProcess, startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { SERVER_NOTE_OPEN } from '../../src/core/context';
import { wireContentText } from '../../src/llm/count-chat-tokens';

const FOLLOW_UP_REPLY = 'The background analysis is done.';

/**
 * Chat answers stream in ten chunks so both tabs see deltas. `analyze in the background` calls the async
 * analyze_thread tool; the tool message gets a short answer; a follow-up (its request ends with the result note)
 * gets FOLLOW_UP_REPLY.
 */
function chat(request: StubRequest) {
  const last = request.body.messages.at(-1);
  // A follow-up ends with the server's note (user-level text under SERVER_NOTE_OPEN).
  if (last?.role === 'user' && wireContentText(last.content).startsWith(SERVER_NOTE_OPEN))
    return replyWithText(FOLLOW_UP_REPLY);
  if (last?.role === 'tool') return replyWithText('It is running in the background.');
  const user = lastUserText(request.body);
  if (user === 'analyze in the background')
    return replyWithToolCalls([{ name: 'analyze_thread', arguments: { pace_ms: 100 } }]);
  // A long answer (about 30 s): stopped long before it ends.
  if (user === 'take your time')
    return replyWithText('', {
      chunks: Array.from({ length: 150 }, (_, index) => `slow-${index} `),
      chunkDelayMs: 200,
    });
  return replyWithText('', {
    chunks: Array.from({ length: 10 }, (_, index) => `${index === 0 ? `answer to ${user}:` : ''} part-${index}`),
    chunkDelayMs: 60,
  });
}

describe('two serve processes and a worker on one Postgres and Redis', () => {
  let stub: OpenAIStub;
  let stack: ProcessStack | undefined;
  const processes: WorkerProcess[] = [];
  const tabs: Tab[] = [];
  let baseA: string;
  let baseB: string;

  beforeAll(async () => {
    // Answers stream in ten chunks so both tabs see deltas; the summarizer keeps CODE-n identifiers.
    stub = await startOpenAIStub({ classifyRequest, responder: summaryResponder({ chat }) });
    stack = await prepareProcessStack({
      name: 'multi',
      modelUrl: stub.url,
      env: { SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2', RATE_LIMIT_PER_MINUTE: '10000' },
    });
    const { env } = stack;
    const a = startServerProcess(env);
    const b = startServerProcess(env);
    const worker = startWorkerProcess(env);
    processes.push(a, b, worker);
    baseA = `http://127.0.0.1:${await a.port}`;
    baseB = `http://127.0.0.1:${await b.port}`;
    await worker.ready;
  });
  afterAll(async () => {
    for (const tab of tabs) tab.close();
    for (const child of processes) await child.kill('SIGTERM');
    await stub?.close();
    await stack?.removeDataDir();
  });

  it("streams to tabs on both processes, serializes sends through both, and delivers the worker's summary-updated", async () => {
    const { token } = (await (await fetch(`${baseA}/api/auth/guest`, { method: 'POST' })).json()) as { token: string };
    const thread = (await (
      await fetch(`${baseA}/api/threads`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: '{}',
      })
    ).json()) as ThreadDto;
    const tabA = await openTab({ baseUrl: baseA }, token);
    const tabB = await openTab({ baseUrl: baseB }, token);
    tabs.push(tabA, tabB);
    for (const tab of [tabA, tabB])
      expect((await tab.request('thread-join', { threadId: thread.id })).response.ok).toBe(true);

    // A turn started on A streams to the tab on A and to the second tab, on B.
    const sent = await tabA.request<{ turnId: string }>('message-send', {
      threadId: thread.id,
      content: 'hello CODE-1',
      clientMessageId: 'm1',
    });
    if (!sent.response.ok) throw new Error(sent.response.error.message);
    const turnId = sent.response.turnId;
    for (const tab of [tabA, tabB]) {
      await waitFor(() => eventsOf(tab, 'turn-end').some((event) => event.turnId === turnId), {
        timeoutMs: 30_000,
        what: 'the turn to end on both tabs',
      });
      const end = eventsOf(tab, 'message-end').find((event) => (event.message as MessageDto).role === 'assistant')!
        .message as MessageDto;
      expect(end.content).toContain('answer to hello CODE-1');
      const deltas = eventsOf(tab, 'message-delta').filter((event) => event.messageId === end.id);
      expect(deltas.length).toBeGreaterThanOrEqual(2);
      expect(deltas.map((event) => event.delta).join('')).toBe(end.content);
    }

    // Two sends to the thread at once, one through each process: one turn after the other.
    const [viaA, viaB] = await Promise.all([
      tabA.request<{ turnId: string }>('message-send', {
        threadId: thread.id,
        content: 'from A CODE-2',
        clientMessageId: 'm2',
      }),
      tabB.request<{ turnId: string }>('message-send', {
        threadId: thread.id,
        content: 'from B CODE-3',
        clientMessageId: 'm3',
      }),
    ]);
    if (!viaA.response.ok || !viaB.response.ok) throw new Error('a send was refused');
    const ids = [viaA.response.turnId, viaB.response.turnId];
    await waitFor(() => ids.every((id) => eventsOf(tabB, 'turn-end').some((event) => event.turnId === id)), {
      timeoutMs: 30_000,
      what: 'both turns to end',
    });
    const page = (await (
      await fetch(`${baseB}/api/threads/${thread.id}/messages`, { headers: { Authorization: `Bearer ${token}` } })
    ).json()) as { messages: MessageDto[] };
    expect(page.messages.map((message) => `${message.seq}:${message.role}`)).toEqual([
      '1:user',
      '2:assistant',
      '3:user',
      '4:assistant',
      '5:user',
      '6:assistant',
    ]);
    for (const index of [2, 4])
      expect(page.messages[index + 1]!.content).toContain(`answer to ${page.messages[index]!.content}:`);
    expect(page.messages.every((message) => message.status === 'complete')).toBe(true);

    // Six messages reach the trigger: the worker process folds, and its summary-updated reaches both tabs through Redis.
    for (const tab of [tabA, tabB]) {
      await waitFor(() => eventsOf(tab, 'summary-updated').length > 0, {
        timeoutMs: 30_000,
        what: 'summary-updated from the worker',
      });
      expect(eventsOf(tab, 'summary-updated')[0]).toMatchObject({ threadId: thread.id, revision: 1 });
    }
    expect(eventsOf(tabA, 'summary-updated')).toHaveLength(1);
  }, 120_000);

  it("delivers an async tool's progress and the follow-up produced through the worker to tabs on both processes", async () => {
    const { token } = (await (await fetch(`${baseB}/api/auth/guest`, { method: 'POST' })).json()) as { token: string };
    const thread = (await (
      await fetch(`${baseB}/api/threads`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: '{}',
      })
    ).json()) as ThreadDto;
    const tabA = await openTab({ baseUrl: baseA }, token);
    const tabB = await openTab({ baseUrl: baseB }, token);
    tabs.push(tabA, tabB);
    for (const tab of [tabA, tabB])
      expect((await tab.request('thread-join', { threadId: thread.id })).response.ok).toBe(true);

    const sent = await tabA.request<{ turnId: string }>('message-send', {
      threadId: thread.id,
      content: 'analyze in the background',
      clientMessageId: 'tool-1',
    });
    if (!sent.response.ok) throw new Error(sent.response.error.message);
    for (const tab of [tabA, tabB]) {
      // The run is executed by the worker process: its progress and end reach both tabs through Redis.
      await waitFor(() => eventsOf(tab, 'tool-end').length > 0, { timeoutMs: 30_000, what: 'tool-end on both tabs' });
      expect(eventsOf(tab, 'tool-progress').length).toBeGreaterThan(0);
      expect(eventsOf(tab, 'tool-end')[0]).toMatchObject({
        threadId: thread.id,
        run: { name: 'analyze_thread', status: 'succeeded' },
      });
      // The follow-up turn the result started is answered, and its answer reaches both tabs.
      await waitFor(
        () => eventsOf(tab, 'message-end').some((event) => (event.message as MessageDto).content === FOLLOW_UP_REPLY),
        { timeoutMs: 30_000, what: 'the follow-up answer on both tabs' },
      );
    }
    expect(
      eventsOf(tabB, 'message-end').filter((event) => (event.message as MessageDto).content === FOLLOW_UP_REPLY),
    ).toHaveLength(1);
  }, 120_000);

  it('stops a turn from a tab on the other process: the Stop is carried to the process running it', async () => {
    const { token } = (await (await fetch(`${baseA}/api/auth/guest`, { method: 'POST' })).json()) as { token: string };
    const thread = (await (
      await fetch(`${baseA}/api/threads`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: '{}',
      })
    ).json()) as ThreadDto;
    const tabA = await openTab({ baseUrl: baseA }, token);
    const tabB = await openTab({ baseUrl: baseB }, token);
    tabs.push(tabA, tabB);
    for (const tab of [tabA, tabB])
      expect((await tab.request('thread-join', { threadId: thread.id })).response.ok).toBe(true);
    // Sent through A: the turn runs in process A.
    const sent = await tabA.request<{ turnId: string }>('message-send', {
      threadId: thread.id,
      content: 'take your time',
      clientMessageId: 'slow-1',
    });
    if (!sent.response.ok) throw new Error(sent.response.error.message);
    await waitFor(() => eventsOf(tabB, 'message-delta').length > 0, {
      timeoutMs: 30_000,
      what: 'the answer to stream',
    });

    const stopped = Date.now();
    const cancel = await tabB.request('turn-cancel', { threadId: thread.id });
    expect(cancel.response).toMatchObject({ ok: true, cancelled: true });
    for (const tab of [tabA, tabB]) {
      await waitFor(() => eventsOf(tab, 'turn-end').some((event) => event.status === 'cancelled'), {
        timeoutMs: 15_000,
        what: 'turn-end cancelled on both tabs',
      });
    }
    expect(Date.now() - stopped).toBeLessThan(15_000);
  }, 120_000);
});
