import { describe, expect, it } from 'vitest';
import type { EditMessageResponseDto, ForgetResponseDto, MessageDto, ThreadDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { replyWithText, type StubRequest } from '../support/openai-stub';
import { openTab } from '../support/socket-client';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { waitFor } from '../support/wait-for';
import { memoryKit, query, waitForIdleSummaryQueue } from '../memory/memory-test-kit';
import { seedLongThread } from './fork-test-kit';

const textOf = (request: StubRequest) => JSON.stringify(request.body.messages);

describe('a fork and its parent after the fork', () => {
  const server = useChatServer({
    stub: { classifyRequest, responder: summaryResponder({ chat: () => replyWithText('noted') }) },
    env: { SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2' },
  });
  const kit = memoryKit(server);

  const settle = async (threadId: string, content: string) => {
    const result = await kit.send(threadId, content);
    await waitForIdleSummaryQueue(server.app);
    return result;
  };
  /** The chat requests made while `run` ran (the other thread is idle meanwhile). */
  const chatsDuring = async (run: () => Promise<unknown>): Promise<StubRequest[]> => {
    const from = server.stub.requests.length;
    await run();
    return server.stub.requests.slice(from).filter((request) => request.kind === 'chat');
  };
  const revisionTexts = async (threadId: string) =>
    (
      await query<{ text: string }>(server.app, 'SELECT text FROM summary_revisions WHERE thread_id = $1', [threadId])
    ).map((row) => row.text);
  const edit = (threadId: string, messageId: string, json: unknown) =>
    server.app.api(`/api/threads/${threadId}/messages/${messageId}/edit`, {
      method: 'POST',
      token: server.token,
      json,
    });

  it('never lets a code planted after the fork point reach the other side; one folded before it reaches both; each folds on its own', async () => {
    const parent = await kit.createThread('Vault');
    await settle(parent.id, 'Setup: the vault code is CODE-111.');
    for (let turn = 1; turn <= 3; turn += 1) await settle(parent.id, `Filler turn ${turn}.`);
    await kit.waitForFoldThrough(parent.id, 2);
    expect((await kit.context(parent.id)).summary?.text).toContain('CODE-111');
    const branch = await settle(parent.id, 'This is where we branch.');
    await settle(parent.id, 'After the branch, only here: CODE-999.');

    const response = await server.app.api(`/api/threads/${parent.id}/fork`, {
      method: 'POST',
      token: server.token,
      json: { atMessageId: branch.messages.at(-1)?.id },
    });
    expect(response.status).toBe(201);
    const fork = (await response.json()) as ThreadDto;
    const forkRevision = (await kit.context(fork.id)).summary?.revision ?? 0;

    const forkChats = await chatsDuring(async () => {
      await settle(fork.id, 'In the branch only: CODE-777.');
      for (let turn = 1; turn <= 4; turn += 1) await settle(fork.id, `Branch turn ${turn}.`);
    });
    expect(forkChats.length).toBe(5);
    // Folded before the fork point: the fork's model has it (its summary), never what the parent said after.
    expect(textOf(forkChats[0] as StubRequest)).toContain('CODE-111');
    for (const request of forkChats) expect(textOf(request)).not.toContain('CODE-999');

    const parentChats = await chatsDuring(async () => {
      for (let turn = 1; turn <= 4; turn += 1) await settle(parent.id, `Parent turn ${turn}.`);
    });
    expect(parentChats.length).toBe(4);
    expect(parentChats.some((request) => textOf(request).includes('CODE-111'))).toBe(true);
    for (const request of parentChats) expect(textOf(request)).not.toContain('CODE-777');

    // Each side folded on its own: the fork's summary moved past the revision it started from and holds its own code;
    // no summarizer call ever mixed the two sides.
    await kit.waitForFoldThrough(fork.id, 12);
    const forkContext = await kit.context(fork.id);
    expect(forkContext.summary?.revision).toBeGreaterThan(forkRevision);
    expect(forkContext.summary?.text).toContain('CODE-777');
    expect((await revisionTexts(fork.id)).join('\n')).not.toContain('CODE-999');
    expect((await revisionTexts(parent.id)).join('\n')).not.toContain('CODE-777');
    const summaries = server.stub.requests.filter((request) => request.kind === 'summary').map(textOf);
    expect(summaries.some((text) => text.includes('CODE-777') && text.includes('CODE-999'))).toBe(false);
    expect(summaries.some((text) => text.includes('CODE-777'))).toBe(true);
  });

  it('keeps pins, fresh context and forgets on their own side, and names the copies a forget did not reach', async () => {
    const parent = await kit.createThread('Independent');
    const secret = await kit.send(parent.id, 'My passport number is CODE-4242.');
    const other = await kit.send(parent.id, 'Unrelated question.');
    const response = await server.app.api(`/api/threads/${parent.id}/fork`, {
      method: 'POST',
      token: server.token,
      json: { atMessageId: other.messages.at(-1)?.id },
    });
    const fork = (await response.json()) as ThreadDto;
    const forkMessages = await kit.transcript(fork.id);
    const copyOf = (original: MessageDto) => forkMessages.find((message) => message.seq === original.seq) as MessageDto;

    // A pin and a fresh context in the fork leave the parent as it was.
    expect(
      (
        await server.app.api(`/api/threads/${fork.id}/messages/${copyOf(other.userMessage).id}/pin`, {
          method: 'POST',
          token: server.token,
        })
      ).status,
    ).toBe(200);
    expect(
      (await server.app.api(`/api/threads/${fork.id}/context-reset`, { method: 'POST', token: server.token })).status,
    ).toBe(201);
    const parentContext = await kit.context(parent.id);
    expect(parentContext.pinnedSeqs).toEqual([]);
    expect((await kit.detail(parent.id)).contextStartSeq).toBe(1);
    expect(parentContext.messages.some((message) => message.content.includes('CODE-4242'))).toBe(true);

    // A forget in the parent does not reach the fork's copy, and says so.
    const forgotten = await server.app.api(`/api/threads/${parent.id}/messages/${secret.userMessage.id}`, {
      method: 'DELETE',
      token: server.token,
    });
    expect(forgotten.status).toBe(200);
    const body = (await forgotten.json()) as ForgetResponseDto;
    expect(body.copies).toEqual(
      expect.arrayContaining([
        {
          threadId: fork.id,
          title: 'Independent (branch)',
          messageId: copyOf(secret.userMessage).id,
          seq: secret.userMessage.seq,
        },
      ]),
    );
    expect(
      (await kit.transcript(fork.id)).find((message) => message.seq === secret.userMessage.seq)?.content,
    ).toContain('CODE-4242');
    // Forgetting it there too (the offer the web app makes): then no copy is left.
    const there = await server.app.api(`/api/threads/${fork.id}/messages/${copyOf(secret.userMessage).id}`, {
      method: 'DELETE',
      token: server.token,
    });
    expect(((await there.json()) as ForgetResponseDto).copies).toEqual([]);
    expect((await kit.transcript(fork.id)).find((message) => message.seq === secret.userMessage.seq)?.deleted).toBe(
      true,
    );
  });

  it("shows a copied answer's summary as the fork has it: text forgotten in the fork does not show in what the model saw", async () => {
    const parent = await kit.createThread('Saw');
    const secret = await settle(parent.id, 'Setup: the locker code is CODE-5151.');
    for (let turn = 1; turn <= 3; turn += 1) await settle(parent.id, `Filler turn ${turn}.`);
    await kit.waitForFoldThrough(parent.id, 2);
    const after = await settle(parent.id, 'A question after the fold.');
    const answer = after.messages.at(-1) as MessageDto;
    type Saw = { summary: { revision: number; text: string | null; redacted: boolean } | null };
    const saw = async (threadId: string, messageId: string) => {
      const response = await server.app.api(`/api/threads/${threadId}/messages/${messageId}/context`, {
        token: server.token,
      });
      expect(response.status).toBe(200);
      return (await response.json()) as Saw;
    };
    expect((await saw(parent.id, answer.id)).summary?.text).toContain('CODE-5151');

    const fork = (await (
      await server.app.api(`/api/threads/${parent.id}/fork`, {
        method: 'POST',
        token: server.token,
        json: { atMessageId: answer.id },
      })
    ).json()) as ThreadDto;
    const forkMessages = await kit.transcript(fork.id);
    const copyOf = (original: MessageDto) => forkMessages.find((message) => message.seq === original.seq) as MessageDto;
    expect((await saw(fork.id, copyOf(answer).id)).summary?.text).toContain('CODE-5151');
    const forgotten = await server.app.api(`/api/threads/${fork.id}/messages/${copyOf(secret.userMessage).id}`, {
      method: 'DELETE',
      token: server.token,
    });
    expect(forgotten.status).toBe(200);

    const inFork = await saw(fork.id, copyOf(answer).id);
    expect(JSON.stringify(inFork)).not.toContain('CODE-5151');
    expect(inFork.summary).toMatchObject({ redacted: true, text: null });
    // The parent, where nothing was forgotten, still shows it.
    expect((await saw(parent.id, answer.id)).summary?.text).toContain('CODE-5151');
  });

  it('edits a message: a fork just before it answers the new text, the parent keeps the original; a repeat answers the same fork', async () => {
    const parent = await kit.createThread('Edits');
    await kit.send(parent.id, 'First question.');
    const original = await kit.send(parent.id, 'Second question with a typo: CODE-1.');
    const chats = await chatsDuring(async () => {
      const response = await edit(parent.id, original.userMessage.id, {
        content: 'Second question, fixed: CODE-2.',
        clientMessageId: 'edit-1',
      });
      expect(response.status).toBe(201);
      const body = (await response.json()) as EditMessageResponseDto;
      expect(body.thread.forkedFrom).toEqual({ threadId: parent.id, seq: (original.userMessage.seq ?? 0) - 1 });
      expect(body.userMessage).toMatchObject({
        threadId: body.thread.id,
        seq: original.userMessage.seq,
        content: 'Second question, fixed: CODE-2.',
      });
      expect(body.turn.status).toBe('complete');
      expect(body.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'noted', status: 'complete' });

      const repeat = await edit(parent.id, original.userMessage.id, {
        content: 'Second question, fixed: CODE-2.',
        clientMessageId: 'edit-1',
      });
      expect(repeat.status).toBe(200);
      expect(((await repeat.json()) as EditMessageResponseDto).thread.id).toBe(body.thread.id);
      expect((await kit.transcript(body.thread.id)).map((message) => message.content)).toEqual([
        'First question.',
        'noted',
        'Second question, fixed: CODE-2.',
        'noted',
      ]);
    });
    expect(chats).toHaveLength(1);
    expect(textOf(chats[0] as StubRequest)).toContain('CODE-2');
    // CODE-1 exactly: the user's other chats (cross-thread recall) may bring the Vault chat's CODE-111, never the parent's typo.
    expect(textOf(chats[0] as StubRequest)).not.toMatch(/CODE-1\b/);
    expect((await kit.transcript(parent.id)).map((message) => message.content)).toContain(
      'Second question with a typo: CODE-1.',
    );
    const forks = (await (await server.app.api(`/api/threads/${parent.id}/forks`, { token: server.token })).json()) as {
      forks: unknown[];
    };
    expect(forks.forks).toHaveLength(1);

    // Bad input loses nothing and forks nothing.
    const empty = await edit(parent.id, original.userMessage.id, { content: '   ', clientMessageId: 'edit-2' });
    expect(empty.status).toBe(400);
    const answer = original.messages.at(-1) as MessageDto;
    const notUser = await edit(parent.id, answer.id, { content: 'x', clientMessageId: 'edit-3' });
    expect(notUser.status).toBe(404);
    const stranger = await server.guest();
    expect(
      (
        await server.app.api(`/api/threads/${parent.id}/messages/${original.userMessage.id}/edit`, {
          method: 'POST',
          token: stranger.token,
          json: { content: 'x' },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        (await (await server.app.api(`/api/threads/${parent.id}/forks`, { token: server.token })).json()) as {
          forks: unknown[];
        }
      ).forks,
    ).toHaveLength(1);
  });

  it('edits over the socket (message-edit), acked like message-send, the answer landing in the fork', async () => {
    const parent = await kit.createThread('Socket edits');
    const sent = await kit.send(parent.id, 'Socket question: CODE-5.');
    const tab = await openTab(server.app, server.token);
    try {
      const { response } = await tab.request<{
        thread: ThreadDto;
        message: MessageDto;
        turnId: string;
        duplicate: boolean;
      }>('message-edit', {
        threadId: parent.id,
        messageId: sent.userMessage.id,
        content: 'Socket question, edited: CODE-6.',
        clientMessageId: 'socket-edit-1',
      });
      if (!response.ok) throw new Error(response.error.message);
      expect(response.duplicate).toBe(false);
      expect(response.thread.forkedFrom).toEqual({ threadId: parent.id, seq: 0 });
      expect(response.message).toMatchObject({
        threadId: response.thread.id,
        content: 'Socket question, edited: CODE-6.',
      });
      await waitFor(
        async () =>
          (await kit.transcript(response.thread.id)).some(
            (message) => message.role === 'assistant' && message.status === 'complete',
          ),
        { timeoutMs: 30_000, what: "the fork's answer" },
      );
      const invalid = await tab.request('message-edit', {
        threadId: parent.id,
        messageId: sent.userMessage.id,
        content: 'x',
      });
      expect(invalid.response).toMatchObject({ ok: false, error: { code: 'VALIDATION' } });
    } finally {
      tab.close();
    }
  });

  it('answers an edit in a 500-message thread within the normal turn latency', async () => {
    const parent = await kit.createThread('Long edit');
    await seedLongThread(server.app, parent.id, { messages: 500, window: 40 });
    let started = performance.now();
    const plain = await kit.send(parent.id, 'A plain turn in the long thread.');
    const sendMs = performance.now() - started;
    started = performance.now();
    const response = await edit(parent.id, plain.userMessage.id, {
      content: 'The same turn, edited.',
      clientMessageId: 'long-edit',
    });
    const editMs = performance.now() - started;
    expect(response.status).toBe(201);
    const body = (await response.json()) as EditMessageResponseDto;
    expect(body.turn.status).toBe('complete');
    expect(body.userMessage.seq).toBe(501);
    expect((await kit.detail(body.thread.id)).messageCount).toBe(502);
    // Latency: a turn's, not a copy per message (generous for a loaded shared machine).
    expect(editMs).toBeLessThan(sendMs * 3 + 2000);
  });
});

describe('forks and the threads-per-user cap', () => {
  const server = useChatServer({
    stub: { classifyRequest, responder: summaryResponder({ chat: () => replyWithText('noted') }) },
    env: { MAX_THREADS_PER_USER: '3' },
  });

  it('counts a fork (and an edit) as a thread: at the cap exactly one of two racing forks is written, then QUOTA_EXCEEDED', async () => {
    const { token } = await server.guest();
    const kit = memoryKit(server.app, token);
    const parent = await kit.createThread('Capped');
    const sent = await kit.send(parent.id, 'Hello there.');
    await kit.createThread('Second');
    // Two forks race for the third and last slot: the owner's creation lock lets exactly one through.
    const racing = await Promise.all(
      [1, 2].map(() =>
        server.app.api(`/api/threads/${parent.id}/fork`, {
          method: 'POST',
          token,
          json: { atMessageId: sent.userMessage.id },
        }),
      ),
    );
    expect(racing.map((response) => response.status).sort()).toEqual([201, 409]);
    const refused = racing.find((response) => response.status === 409) as Response;
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('QUOTA_EXCEEDED');
    const edit = await server.app.api(`/api/threads/${parent.id}/messages/${sent.userMessage.id}/edit`, {
      method: 'POST',
      token,
      json: { content: 'Hi.', clientMessageId: 'capped-edit' },
    });
    expect(edit.status).toBe(409);
    const body = (await edit.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('QUOTA_EXCEEDED');
    expect(body.error.message).toMatch(/MAX_THREADS_PER_USER = 3/);
    expect(
      (
        await query<{ n: number }>(
          server.app,
          'SELECT count(*)::int AS n FROM threads WHERE owner_id = (SELECT owner_id FROM threads WHERE id = $1)',
          [parent.id],
        )
      )[0]?.n,
    ).toBe(3);
  });
});
