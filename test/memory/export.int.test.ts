import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { MessageDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { memoryKit, query } from './memory-test-kit';

const MESSAGES = 100_000;
const FILLER = 'lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(10);

// Live heap, not garbage V8 has not collected yet: a full collection before each sample.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
const liveHeap = () => {
  collectGarbage();
  return process.memoryUsage().heapUsed;
};

/** Reads a streamed body line by line without keeping it; samples this process' live heap meanwhile. */
async function consumeLines(
  response: Response,
  onLine: (line: string) => void,
): Promise<{ bytes: number; peakHeapGrowth: number }> {
  const baseline = liveHeap();
  let peak = baseline;
  // Every 2 s: each sample is a full collection of this process (the app and the test), ~0.5 s on a busy machine;
  // sampled every 0.4 s they were two thirds of the test's time. A buffered export holds its ~60 MB for the whole
  // transfer, many samples long.
  const sampler = setInterval(() => {
    peak = Math.max(peak, liveHeap());
  }, 2000);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let carry = '';
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      const lines = (carry + decoder.decode(value, { stream: true })).split('\n');
      carry = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    }
    if (carry) onLine(carry);
  } finally {
    clearInterval(sampler);
  }
  return { bytes, peakHeapGrowth: peak - baseline };
}

describe('streamed export of a 100,000-message thread', () => {
  const server = useChatServer();
  let threadId: string;

  beforeAll(async () => {
    threadId = (await memoryKit(server).createThread('huge')).id;
    await query(
      server.app,
      `
      INSERT INTO messages (id, thread_id, seq, role, content, status, tokens, deleted_at)
      SELECT gen_random_uuid(), $1::uuid, i, CASE WHEN i % 2 = 1 THEN 'user' ELSE 'assistant' END,
             CASE WHEN i = 777 THEN '' ELSE 'message ' || i || ': ' || $2 END, 'complete', 130,
             CASE WHEN i = 777 THEN now() END
      FROM generate_series(1, ${MESSAGES}) AS i`,
      [threadId, FILLER],
    );
    await query(
      server.app,
      `
      INSERT INTO summary_revisions (id, thread_id, revision, author, text, tokens, from_seq, through_seq, redacted_at)
      VALUES (gen_random_uuid(), $1, 1, 'fold', '', 0, 1, 5000, now()),
             (gen_random_uuid(), $1, 2, 'rebuild', 'The user and the assistant talked at length [#1–9000].', 12, 1, 9000, NULL)`,
      [threadId],
    );
    await query(
      server.app,
      `UPDATE threads SET last_seq = ${MESSAGES}, summary_text = 'The user and the assistant talked at length [#1–9000].',
      summary_tokens = 12, summary_revision = 2, summary_covered_through_seq = 9000, settings = '{"keep":"messages=20"}' WHERE id = $1`,
      [threadId],
    );
  }, 180_000);

  it('streams the whole transcript as JSON, tombstones and revisions included, in flat memory', async () => {
    const response = await server.app.api(`/api/threads/${threadId}/export?format=json`, { token: server.token });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="thread-${threadId}.json"`);
    let expectedSeq = 1;
    let outOfOrder = 0;
    const revisions: {
      revision: number;
      fromSeq: number;
      throughSeq: number;
      redacted: boolean;
      text: string | null;
    }[] = [];
    let header = '';
    let tombstone: MessageDto | null = null;
    const { bytes, peakHeapGrowth } = await consumeLines(response, (line) => {
      const item = line.replace(/,$/, '');
      if (item.startsWith('{"id"')) {
        const message = JSON.parse(item) as MessageDto;
        if (message.seq !== expectedSeq) outOfOrder += 1;
        if (message.seq === 777) tombstone = message;
        expectedSeq += 1;
      } else if (item.startsWith('{"revision"')) {
        revisions.push(JSON.parse(item) as (typeof revisions)[number]);
      } else if (item.startsWith('"thread"')) {
        header = item;
      }
    });
    expect(expectedSeq - 1).toBe(MESSAGES);
    expect(outOfOrder).toBe(0);
    expect(bytes).toBeGreaterThan(MESSAGES * 500);
    expect(tombstone).toMatchObject({ seq: 777, role: 'user', deleted: true, content: '' });
    expect(revisions).toEqual([
      expect.objectContaining({ revision: 1, fromSeq: 1, throughSeq: 5000, redacted: true, text: null }),
      expect.objectContaining({
        revision: 2,
        fromSeq: 1,
        throughSeq: 9000,
        redacted: false,
        text: 'The user and the assistant talked at length [#1–9000].',
      }),
    ]);
    expect(header).toContain(
      '"settings":{"trigger":null,"keep":"messages=20","summaryPrompt":null,"recallTokens":null,"recallScope":null}',
    );
    // The server and this client share the process: a non-streaming export would hold the ~60 MB transcript at once.
    expect(peakHeapGrowth).toBeLessThan(50 * 1024 * 1024);
  }, 180_000);

  it('streams it as Markdown too', async () => {
    const response = await server.app.api(`/api/threads/${threadId}/export?format=markdown`, { token: server.token });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/markdown/);
    let headings = 0;
    let deleted = 0;
    let revisionHeadings = 0;
    const { peakHeapGrowth } = await consumeLines(response, (line) => {
      if (line.startsWith('### #')) headings += 1;
      if (line === '_deleted_') deleted += 1;
      if (line.startsWith('### Revision')) revisionHeadings += 1;
    });
    expect(headings).toBe(MESSAGES);
    expect(deleted).toBe(1);
    expect(revisionHeadings).toBe(2);
    expect(peakHeapGrowth).toBeLessThan(50 * 1024 * 1024);
  }, 180_000);

  it('is only for the thread owner (or an admin)', async () => {
    const stranger = await server.guest();
    expect((await server.app.api(`/api/threads/${threadId}/export`, { token: stranger.token })).status).toBe(404);
    expect((await server.app.api(`/api/threads/${threadId}/export?format=pdf`, { token: server.token })).status).toBe(
      400,
    );
  });
});
