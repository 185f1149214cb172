import type { TestApp } from './test-app';

/** Every row of every table (migrations' bookkeeping aside), as text sorted per table: the database's whole state. */
export async function databaseSnapshot(app: Pick<TestApp, 'application'>): Promise<Record<string, string[]>> {
  const tables = await app.application.db.$queryRawUnsafe<{ name: string }[]>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'
     ORDER BY table_name`,
  );
  const state: Record<string, string[]> = {};
  for (const { name } of tables) {
    const [row] = await app.application.db.$queryRawUnsafe<{ rows: string[] }[]>(
      `SELECT coalesce(array_agg(t::text ORDER BY t::text), '{}') AS rows FROM "${name}" t`,
    );
    state[name] = row?.rows ?? [];
  }
  return state;
}

/** The tables whose rows differ between two snapshots. */
export function changedTables(before: Record<string, string[]>, after: Record<string, string[]>): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
    (table) => JSON.stringify(before[table]) !== JSON.stringify(after[table]),
  );
}
