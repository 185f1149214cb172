import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { CATCH_UP_MAX_CHARS } from '../../src/realtime/handlers/thread-join';
import type { MessageDto, ThreadDto } from '../../src/shared/api';
import type { ThreadJoinResult } from '../../src/shared/socket-events';
import { useChatServer } from '../support/chat-server';
import type { TestApp } from '../support/test-app';

/** Seeds `count` complete messages of `chars` characters each (user/assistant alternating) straight into Postgres. */
async function seedLargeMessages(
  app: Pick<TestApp, 'databaseUrl'>,
  threadId: string,
  options: { count: number; chars: number },
): Promise<void> {
  const client = new pg.Client({ connectionString: app.databaseUrl });
  await client.connect();
  try {
    await client.query(
      `
      INSERT INTO messages (id, thread_id, seq, role, content, status, tokens, encoding, created_at, updated_at, completed_at)
      SELECT gen_random_uuid(), $1::uuid, g, CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END,
        'Message ' || g || ': ' || repeat('x', $3::int), 'complete', 10, 'o200k_base', now(), now(), now()
      FROM generate_series(1, $2::int) g`,
      [threadId, options.count, options.chars],
    );
    await client.query('UPDATE threads SET last_seq = $2 WHERE id = $1', [threadId, options.count]);
  } finally {
    await client.end();
  }
}

const sizeOf = (messages: MessageDto[]) => messages.reduce((sum, message) => sum + message.content.length, 0);

describe('socket catch-up (thread-join with afterSeq) of a long transcript of large messages', () => {
  const server = useChatServer();

  const newThread = async () =>
    (await (
      await server.app.api('/api/threads', { method: 'POST', token: server.token, json: {} })
    ).json()) as ThreadDto;

  it('answers bounded acks (about 1 MB of text each), and asking again after the last seq gets the rest exactly once', async () => {
    const thread = await newThread();
    // 60 messages of ~150 KB: about 9 MB, once in a single ack.
    await seedLargeMessages(server.app, thread.id, { count: 60, chars: 150_000 });
    const tab = await server.openTab();
    const acks: ThreadJoinResult[] = [];
    let after = 0;
    for (let round = 0; round < 60; round += 1) {
      const { response } = await tab.request<ThreadJoinResult>('thread-join', { threadId: thread.id, afterSeq: after });
      if (!response.ok) throw new Error(`join failed: ${response.error.code}`);
      acks.push(response);
      expect(sizeOf(response.messages)).toBeLessThanOrEqual(CATCH_UP_MAX_CHARS);
      expect(response.messages.length).toBeGreaterThan(0);
      if (!response.hasMoreAfter) break;
      after = response.messages.at(-1)!.seq!;
    }
    expect(acks.length).toBeGreaterThanOrEqual(9);
    expect(acks.slice(0, -1).every((ack) => ack.hasMoreAfter === true)).toBe(true);
    expect(acks.at(-1)?.hasMoreAfter).toBe(false);
    const seqs = acks.flatMap((ack) => ack.messages.map((message) => message.seq));
    expect(seqs).toEqual(Array.from({ length: 60 }, (_, index) => index + 1));
  });

  it('sends a message larger than the bound alone, so every ack makes progress', async () => {
    const thread = await newThread();
    await seedLargeMessages(server.app, thread.id, { count: 3, chars: CATCH_UP_MAX_CHARS + 10_000 });
    const tab = await server.openTab();
    const seqs: number[][] = [];
    let after = 0;
    for (let round = 0; round < 5; round += 1) {
      const { response } = await tab.request<ThreadJoinResult>('thread-join', { threadId: thread.id, afterSeq: after });
      if (!response.ok) throw new Error(`join failed: ${response.error.code}`);
      seqs.push(response.messages.map((message) => message.seq!));
      if (!response.hasMoreAfter) break;
      after = response.messages.at(-1)!.seq!;
    }
    expect(seqs).toEqual([[1], [2], [3]]);
  });
});
