import { describe, expect, it } from 'vitest';
import type { ThreadDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { replyWithText } from '../support/openai-stub';
import { memoryKit, query } from '../memory/memory-test-kit';

/** FORK_MAX_MESSAGES of this file's server: a branch may copy messages #1..#4. */
const FORK_MAX_MESSAGES = 4;

describe('fork limits (FORKS_PER_MINUTE, FORK_MAX_MESSAGES)', () => {
  const server = useChatServer({
    stub: { responder: () => replyWithText('noted') },
    env: { FORK_MAX_MESSAGES: String(FORK_MAX_MESSAGES) },
  });

  const fork = (threadId: string, atMessageId: string, token: string) =>
    server.app.api(`/api/threads/${threadId}/fork`, { method: 'POST', token, json: { atMessageId } });
  const forksOf = async (threadId: string) =>
    (
      await query<{ n: number }>(
        server.app,
        'SELECT count(*)::int AS n FROM threads WHERE forked_from_thread_id = $1',
        [threadId],
      )
    )[0]?.n;

  it('answers 429 RATE_LIMITED with Retry-After once a user made FORKS_PER_MINUTE (10) forks in a minute, long before 60', async () => {
    const user = await server.guest();
    const kit = memoryKit(server.app, user.token);
    const parent = await kit.createThread('Branch me');
    const sent = await kit.send(parent.id, 'hello');
    const statuses: number[] = [];
    let refused: Response | null = null;
    for (let attempt = 0; attempt < 60 && !refused; attempt += 1) {
      const response = await fork(parent.id, sent.userMessage.id, user.token);
      statuses.push(response.status);
      if (response.status !== 201) refused = response;
    }
    expect(statuses).toEqual([...Array.from({ length: 10 }, () => 201), 429]);
    expect(refused?.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    const body = (await refused!.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('RATE_LIMITED');
    expect(body.error.message).toMatch(/Too many branches/);
    expect(await forksOf(parent.id)).toBe(10);
    // The budget is the user's own: another user still forks their thread.
    const other = await server.guest();
    const theirs = memoryKit(server.app, other.token);
    const otherParent = await theirs.createThread('Mine');
    const otherSent = await theirs.send(otherParent.id, 'hi');
    expect((await fork(otherParent.id, otherSent.userMessage.id, other.token)).status).toBe(201);
  });

  it('refuses (413 TOO_LARGE) a fork or an edit that would copy more than FORK_MAX_MESSAGES messages, writing nothing', async () => {
    const user = await server.guest();
    const kit = memoryKit(server.app, user.token);
    const parent = await kit.createThread('Long enough');
    const first = await kit.send(parent.id, 'one');
    const second = await kit.send(parent.id, 'two');
    const third = await kit.send(parent.id, 'three');
    expect([first.userMessage.seq, second.userMessage.seq, third.userMessage.seq]).toEqual([1, 3, 5]);
    // Through #3 (3 messages) and #4 (the answer, 4): within the cap.
    expect((await fork(parent.id, second.userMessage.id, user.token)).status).toBe(201);
    expect((await fork(parent.id, second.messages.at(-1)!.id, user.token)).status).toBe(201);
    // Through #5: one more than one branch may copy.
    const tooLarge = await fork(parent.id, third.userMessage.id, user.token);
    expect(tooLarge.status).toBe(413);
    const body = (await tooLarge.json()) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({ code: 'TOO_LARGE' });
    expect(body.error.message).toMatch(/FORK_MAX_MESSAGES = 4/);
    // An edit of #7 would fork through #6: refused the same way, before it spends from the send limit.
    const fourth = await kit.send(parent.id, 'four');
    const edit = await server.app.api(`/api/threads/${parent.id}/messages/${fourth.userMessage.id}/edit`, {
      method: 'POST',
      token: user.token,
      json: { content: 'four, edited' },
    });
    expect(edit.status).toBe(413);
    expect(await forksOf(parent.id)).toBe(2);
    const threads = (await (await server.app.api('/api/threads', { token: user.token })).json()) as {
      threads: ThreadDto[];
    };
    expect(threads.threads).toHaveLength(3);
  });
});
