import pg from 'pg';
import { startBenchStack } from './support/bench-stack';
import type { Services } from './support/stack';
import { distribution, type Distribution } from './support/stats';

export interface HistoryResult {
  short: Distribution;
  long: Distribution;
  longMessages: number;
}

const WINDOW = 12;

/**
 * Pre-model overhead on a thread with `messages` transcript messages against a 10-message thread, turns
 * alternating between the two so both see the same machine noise. The long thread is seeded with SQL the way
 * real folds leave it: every message and turn stored, model call records, summary revisions, a summary covering
 * all but the last 12 messages, and only those 12 left in the window.
 */
export async function measureHistoryLength(
  services: Services,
  options: { messages: number; turns: number; warmup: number },
): Promise<HistoryResult> {
  const stack = await startBenchStack(services);
  try {
    const token = await stack.probe.guest();
    const shortThread = await stack.probe.thread(token, 'short');
    const longThread = await stack.probe.thread(token, 'long');
    await seedThread(stack.app.databaseUrl, shortThread, { messages: 10, summarized: false });
    await seedThread(stack.app.databaseUrl, longThread, { messages: options.messages, summarized: true });
    const short: number[] = [];
    const long: number[] = [];
    for (let turn = 0; turn < options.warmup + options.turns; turn += 1) {
      const first = turn % 2 === 0;
      const a = await stack.probe.turn({ token, threadId: first ? shortThread : longThread });
      const b = await stack.probe.turn({ token, threadId: first ? longThread : shortThread });
      if (turn < options.warmup) continue;
      (first ? short : long).push(a.pre);
      (first ? long : short).push(b.pre);
    }
    return { short: distribution(short), long: distribution(long), longMessages: options.messages };
  } finally {
    await stack.stop();
  }
}

async function seedThread(
  databaseUrl: string,
  threadId: string,
  options: { messages: number; summarized: boolean },
): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const n = options.messages;
  const covered = options.summarized ? n - WINDOW : 0;
  const content = `'Message ' || g || ': we discussed the rollout of CODE-' || g || ' and what the team should check before Friday.'`;
  try {
    await client.query('BEGIN');
    // One turn per exchange (user message + answer), every one of them finished.
    await client.query(
      `
      INSERT INTO turns (id, thread_id, kind, user_message_id, status, created_at, started_at, finished_at)
      SELECT md5($1 || 'turn' || g)::uuid, $1::uuid, 'message', md5($1 || 'msg' || g)::uuid, 'complete', now(), now(), now()
      FROM generate_series(1, $2::int, 2) g`,
      [threadId, n],
    );
    await client.query(
      `
      INSERT INTO messages (id, thread_id, seq, role, content, status, tokens, encoding, turn_id, created_at, updated_at, completed_at)
      SELECT md5($1 || 'msg' || g)::uuid, $1::uuid, g, CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END, ${content}, 'complete', 24,
        'o200k_base', md5($1 || 'turn' || (g - 1 + g % 2))::uuid, now(), now(), now()
      FROM generate_series(1, $2::int) g`,
      [threadId, n],
    );
    await client.query(
      `
      INSERT INTO context_entries (thread_id, seq, message_id, role, content, tokens, encoding)
      SELECT $1::uuid, g, md5($1 || 'msg' || g)::uuid, CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END, ${content}, 24, 'o200k_base'
      FROM generate_series($3::int + 1, $2::int) g`,
      [threadId, n, covered],
    );
    await client.query(
      `
      INSERT INTO model_calls (id, thread_id, user_id, purpose, model, estimated_prompt_tokens, latency_ms)
      SELECT gen_random_uuid(), $1::uuid, (SELECT owner_id FROM threads WHERE id = $1::uuid), 'chat', 'gpt-4o-mini', 900, 500
      FROM generate_series(1, $2::int / 2) g`,
      [threadId, n],
    );
    if (options.summarized) {
      const revisions = Math.max(1, Math.floor(covered / 40));
      await client.query(
        `
        INSERT INTO summary_revisions (id, thread_id, revision, author, text, tokens, from_seq, through_seq)
        SELECT gen_random_uuid(), $1::uuid, r, 'fold', repeat('Earlier: the team agreed on the rollout plan. ', 60), 600, (r - 1) * 40 + 1, r * 40
        FROM generate_series(1, $2::int) r`,
        [threadId, revisions],
      );
      await client.query(
        `
        UPDATE threads SET summary_text = $2, summary_tokens = 640, summary_encoding = 'o200k_base', summary_covered_through_seq = $3,
          summary_revision = $4, version = $4, last_fold_at = now()
        WHERE id = $1`,
        [threadId, summaryText(covered), covered, revisions],
      );
    }
    await client.query('UPDATE threads SET last_seq = $2 WHERE id = $1', [threadId, n]);
    await client.query('COMMIT');
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
}

/** A summary of the size a real fold leaves (~600 tokens), citing its range. */
function summaryText(covered: number): string {
  const facts = Array.from(
    { length: 24 },
    (_, index) =>
      `- Decision ${index + 1}: the rollout of CODE-${index * 97} goes ahead after review [#${1 + index * 10}].`,
  );
  return `Intent: plan and ship the rollout over many weeks [#1–${covered}].\n${facts.join('\n')}\nOpen: confirm the Friday checks.`;
}
