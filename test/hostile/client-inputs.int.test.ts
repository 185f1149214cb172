import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ENCODED_PIECE_CHARS, tokenizerWork } from '../../src/core/context';
import { ERROR_STATUS } from '../../src/shared/errors';
import type { ThreadDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { waitFor } from '../support/wait-for';
import { deeplyNestedJson, hostileTexts, veryWideJson } from './hostile-inputs';
import { HOSTILE_CASES, type HostileAnswer, type HostileContext } from './hostile-cases';

/**
 * Every entry point that takes client text or JSON (docs/security.md lists them, with the case that covers each),
 * sent its largest accepted input in the worst shapes. Each must answer with a success or a coded refusal (never a
 * 5xx or a dropped socket), and the work it caused must stay bounded: no input of more than 256 characters ever
 * reaches the byte-pair encoder (js-tiktoken's merge is quadratic in its input), whatever the text. Judged by
 * counting work, not by the clock; the reliability suite runs the same cases against a server process and watches
 * its event loop.
 */
const ADMIN_TOKEN = 'test-admin-token-0123456789';
const server = useChatServer({ env: { MAX_MESSAGE_CHARS: '32000', FORKS_PER_MINUTE: '1000' } });

describe('hostile client input, at every entry point that takes text or JSON', () => {
  let context: HostileContext;
  let db: pg.Client;

  beforeAll(async () => {
    db = new pg.Client({ connectionString: server.app.databaseUrl });
    await db.connect();
    const tab = await server.openTab();
    const created = await server.app.api('/api/threads', { method: 'POST', token: server.token, json: {} });
    const thread = (await created.json()) as ThreadDto;
    context = { app: server.app, token: server.token, thread, tab, adminToken: ADMIN_TOKEN };
    // The longest input the encoder was handed from here on: each case checks it, so work a case started in the
    // background (the turn of an accepted message) is caught by the next one, and by the last test below.
    tokenizerWork.longestEncoderInput = 0;
  });
  afterAll(async () => {
    await db?.end();
  });

  for (const hostileCase of HOSTILE_CASES) {
    describe(hostileCase.entry, () => {
      for (const [shape, text] of Object.entries(hostileTexts(hostileCase.largestText))) {
        it(`answers ${hostileCase.largestText.toLocaleString('en')} characters of ${shape} clearly, with bounded work`, async () => {
          const answer = await hostileCase.send(context, { text });
          expectClearAnswer(answer, hostileCase.entry);
          expect(
            tokenizerWork.longestEncoderInput,
            'longest input handed to the byte-pair encoder',
          ).toBeLessThanOrEqual(MAX_ENCODED_PIECE_CHARS);
          // The server still answers, at once.
          expect((await server.app.api('/healthz')).status).toBe(200);
        });
      }
      const { sendJson, largestJsonBytes } = hostileCase;
      if (sendJson && largestJsonBytes) {
        const bodies = {
          'deeply nested JSON': deeplyNestedJson(largestJsonBytes / 2 - 8),
          'very wide JSON': veryWideJson(Math.floor(largestJsonBytes / 16)),
        };
        for (const [shape, body] of Object.entries(bodies)) {
          it(`answers ${shape} of about ${largestJsonBytes.toLocaleString('en')} bytes clearly`, async () => {
            const answer = await sendJson(context, body);
            expectClearAnswer(answer, hostileCase.entry);
            expect((await server.app.api('/healthz')).status).toBe(200);
          });
        }
      }
    });
  }

  it('answered every accepted message with bounded work too', async () => {
    const running = async () =>
      Number(
        (
          await db.query<{ count: string }>(
            "SELECT count(*) FROM turns u JOIN threads t ON t.id = u.thread_id WHERE t.owner_id = $1 AND u.status IN ('queued', 'running')",
            [server.userId],
          )
        ).rows[0]!.count,
      );
    await waitFor(async () => (await running()) === 0, { timeoutMs: 60_000, what: 'every turn to end' });
    expect(tokenizerWork.longestEncoderInput).toBeLessThanOrEqual(MAX_ENCODED_PIECE_CHARS);
  });

  it('stores every message it accepted, once, and nothing it refused', async () => {
    const { rows } = await db.query<{ count: string }>(
      "SELECT count(*) FROM messages m JOIN threads t ON t.id = m.thread_id WHERE t.owner_id = $1 AND m.role = 'user'",
      [server.userId],
    );
    expect(Number(rows[0]!.count)).toBe(context.accepted ?? 0);
  });
});

function expectClearAnswer(answer: HostileAnswer, entry: string): void {
  expect(answer.status, `${entry}: ${JSON.stringify(answer.body).slice(0, 300)}`).toBeLessThan(500);
  if (answer.status >= 400) {
    const error = (answer.body as { error?: { code?: string; message?: string } } | null)?.error;
    expect(error?.message?.length ?? 0, `${entry} refuses with a message`).toBeGreaterThan(0);
    if (error?.code && error.code in ERROR_STATUS && !entry.startsWith('POST /v1'))
      expect(ERROR_STATUS[error.code as keyof typeof ERROR_STATUS], `${entry}: status of ${error.code}`).toBe(
        answer.status,
      );
  }
}
