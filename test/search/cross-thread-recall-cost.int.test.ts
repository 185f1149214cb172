// The work of cross-thread recall, counted in rows (not time): a user's long history in many chats must not make every
// turn's context read rank all of it.
import { describe, expect, it } from 'vitest';
import { Prisma } from '../../src/db/generated/client';
import {
  ELSEWHERE_MAX_MATCHES,
  ELSEWHERE_PER_THREAD,
  ELSEWHERE_RECALL_CHATS,
  elsewhereRankedSql,
} from '../../src/db/search-sql';
import { useChatServer } from '../support/chat-server';
import { memoryKit } from '../memory/memory-test-kit';

const CHATS = 12;
const PER_CHAT = 150;

interface PlanNode {
  'Subplan Name'?: string;
  'Actual Rows'?: number;
  Plans?: PlanNode[];
}

/** The rows a CTE produced in an EXPLAIN ANALYZE plan. */
function cteRows(node: PlanNode, name: string): number | undefined {
  if (node['Subplan Name'] === `CTE ${name}`) return node['Actual Rows'];
  for (const child of node.Plans ?? []) {
    const rows = cteRows(child, name);
    if (rows !== undefined) return rows;
  }
  return undefined;
}

describe("cross-thread recall's work does not grow with the user's history", () => {
  const server = useChatServer();
  const kit = memoryKit(server);

  it('auto-recall searches at most the ELSEWHERE_RECALL_CHATS most recently active chats, an explicit search all of them', async () => {
    const asking = await kit.createThread('Asking');
    const db = server.app.application.db;
    const others = ELSEWHERE_RECALL_CHATS + 5;
    await db.$executeRawUnsafe(
      `INSERT INTO threads (id, owner_id, title, last_activity_at)
       SELECT gen_random_uuid(), owner_id, 'Chat ' || g, now() - g * interval '1 minute'
       FROM threads, generate_series(1, $2::int) g WHERE id = $1::uuid`,
      asking.id,
      others,
    );
    const searched = async (maxChats: number | undefined) => {
      const query = elsewhereRankedSql({
        threadId: Prisma.sql`${asking.id}::uuid`,
        query: Prisma.sql`${'Which warehouse was the rollout for?'}::text`,
        limit: Prisma.sql`${8}::int`,
        ...(maxChats === undefined ? {} : { maxChats }),
      });
      const [explained] = await db.$queryRawUnsafe<{ 'QUERY PLAN': { Plan: PlanNode }[] }[]>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${query.text}`,
        ...query.values,
      );
      return cteRows(explained!['QUERY PLAN'][0]!.Plan, 'corpus');
    };
    // More of the user's other chats than the bound.
    expect(await searched(ELSEWHERE_RECALL_CHATS)).toBe(ELSEWHERE_RECALL_CHATS);
    expect(await searched(undefined)).toBeGreaterThanOrEqual(others);
  });

  it('ranks at most ELSEWHERE_MAX_MATCHES matches of the other chats, however many match', async () => {
    // More matches than the bound even though each chat stays under its own bound.
    expect(PER_CHAT).toBeLessThan(ELSEWHERE_PER_THREAD);
    expect((CHATS - 1) * PER_CHAT).toBeGreaterThan(ELSEWHERE_MAX_MATCHES);
    const threadIds: string[] = [];
    for (let index = 0; index < CHATS; index += 1) threadIds.push((await kit.createThread(`Rollout ${index}`)).id);
    const db = server.app.application.db;
    await db.$executeRawUnsafe(
      `INSERT INTO messages (id, thread_id, seq, role, content, status, tokens, encoding, updated_at)
       SELECT gen_random_uuid(), t.id, g, CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END,
         'Message ' || g || ' about the warehouse rollout and its checks.', 'complete', 14, 'o200k_base', now()
       FROM unnest($1::uuid[]) t(id), generate_series(1, $2::int) g`,
      threadIds,
      PER_CHAT,
    );
    await db.$executeRawUnsafe(
      `UPDATE threads SET last_seq = $2::int, last_activity_at = now() - (array_position($1::uuid[], id) * interval '1 minute')
       WHERE id = ANY($1::uuid[])`,
      threadIds,
      PER_CHAT,
    );
    const [matching] = await db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM messages WHERE thread_id = ANY($1::uuid[]) AND search_vector @@ plainto_tsquery((SELECT language::regconfig FROM search_settings WHERE id = 1), 'warehouse')`,
      threadIds.slice(1),
    );
    expect(matching?.n).toBe((CHATS - 1) * PER_CHAT);

    const query = elsewhereRankedSql({
      threadId: Prisma.sql`${threadIds[0]}::uuid`,
      query: Prisma.sql`${'Which warehouse was the rollout for?'}::text`,
      limit: Prisma.sql`${8}::int`,
    });
    const [explained] = await db.$queryRawUnsafe<{ 'QUERY PLAN': { Plan: PlanNode }[] }[]>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${query.text}`,
      ...query.values,
    );
    const plan = explained?.['QUERY PLAN'][0]?.Plan;
    expect(plan).toBeDefined();
    // `uniq`: the matches read (one per original message; none is a fork's copy here), as ranking receives them.
    const ranked = cteRows(plan!, 'uniq');
    expect(ranked).toBe(ELSEWHERE_MAX_MATCHES);

    // The newest chats' matches are the ones ranked: the best ones come from the most recently active chats.
    const best = await db.$queryRawUnsafe<{ thread_id: string }[]>(query.text, ...query.values);
    expect(best.length).toBeGreaterThan(0);
    const ranks = best.map((row) => threadIds.indexOf(row.thread_id));
    expect(Math.max(...ranks)).toBeLessThanOrEqual(Math.ceil(ELSEWHERE_MAX_MATCHES / PER_CHAT));
  });
});
