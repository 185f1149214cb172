import pg from 'pg';
import type { TestApp } from '../support/test-app';

/**
 * Seeds a long, summarized thread with SQL (as bench/history-length.ts does): `messages` alternating user/assistant
 * messages with stored counts, one finished turn per exchange, the last `window` of them in the window, the rest
 * covered by summary revisions of 40 messages each. Its memory mode is window-only, so no fold takes its window
 * meanwhile. Returns the current revision.
 */
/** A version-4-shaped uuid derived from `expression` (the API validates ids as RFC 4122 uuids). */
const v4 = (expression: string) => `overlay(overlay(md5(${expression}) placing '4' from 13) placing '8' from 17)::uuid`;

export async function seedLongThread(
  app: Pick<TestApp, 'databaseUrl'>,
  threadId: string,
  options: { messages: number; window: number },
): Promise<{ revision: number }> {
  const client = new pg.Client({ connectionString: app.databaseUrl });
  await client.connect();
  const n = options.messages;
  const covered = n - options.window;
  const revisions = Math.max(1, Math.floor(covered / 40));
  const content = `'Message ' || g || ': we discussed the rollout of CODE-' || g || ' and what the team should check before Friday.'`;
  const role = `CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END`;
  try {
    await client.query('BEGIN');
    await client.query(
      `
      INSERT INTO turns (id, thread_id, kind, user_message_id, status, created_at, started_at, finished_at)
      SELECT ${v4("$1 || 'turn' || g")}, $1::uuid, 'message', ${v4("$1 || 'msg' || g")}, 'complete', now(), now(), now()
      FROM generate_series(1, $2::int, 2) g`,
      [threadId, n],
    );
    await client.query(
      `
      INSERT INTO messages (id, thread_id, seq, role, content, status, tokens, encoding, turn_id, created_at, updated_at, completed_at)
      SELECT ${v4("$1 || 'msg' || g")}, $1::uuid, g, ${role}, ${content}, 'complete', 20 + g % 7, 'o200k_base',
        ${v4("$1 || 'turn' || (g - 1 + g % 2)")}, now(), now(), now()
      FROM generate_series(1, $2::int) g`,
      [threadId, n],
    );
    await client.query(
      `
      INSERT INTO context_entries (thread_id, seq, message_id, role, content, tokens, encoding)
      SELECT $1::uuid, g, ${v4("$1 || 'msg' || g")}, ${role}, ${content}, 20 + g % 7, 'o200k_base'
      FROM generate_series($3::int + 1, $2::int) g`,
      [threadId, n, covered],
    );
    await client.query(
      `
      INSERT INTO summary_revisions (id, thread_id, revision, author, text, tokens, from_seq, through_seq)
      SELECT gen_random_uuid(), $1::uuid, r, 'fold', 'Summary through #' || least(r * 40, $3::int) || ': the rollout plan.', 12,
        (r - 1) * 40 + 1, CASE WHEN r = $2::int THEN $3::int ELSE r * 40 END
      FROM generate_series(1, $2::int) r`,
      [threadId, revisions, covered],
    );
    await client.query(
      `
      UPDATE threads SET last_seq = $2::int, summary_text = 'Summary through #' || $3::int || ': the rollout plan.', summary_tokens = 12,
        summary_encoding = 'o200k_base', summary_covered_through_seq = $3::int, summary_revision = $4::int, version = $4::int,
        memory_mode = 'window-only'
      WHERE id = $1`,
      [threadId, n, covered, revisions],
    );
    await client.query('COMMIT');
    await client.query('ANALYZE messages');
  } finally {
    await client.end();
  }
  return { revision: revisions };
}
