import type { LogPort } from '../core/ports';
import { ConfigError } from '../config/env';
import type { Database } from './prisma-client';

/** Characters of a message the index reads (the same bound as the trigger of the search_index migration). */
const INDEXED_PREFIX_CHARS = 100_000;
const REINDEX_BATCH = 2000;

async function assertConfigurationExists(db: Database, language: string): Promise<void> {
  const rows = await db.$queryRaw<
    { found: boolean }[]
  >`SELECT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = ${language}) AS found`;
  if (rows[0]?.found !== true)
    throw new ConfigError(
      `SEARCH_LANGUAGE: Postgres has no text search configuration "${language}" (see SELECT cfgname FROM pg_ts_config)`,
    );
}

/**
 * At start: SEARCH_LANGUAGE must name a Postgres text search configuration. On a database with nothing indexed yet it
 * becomes the index's configuration; otherwise a different one is only a warning (search keeps the configuration
 * the index was built with until `npm run search:reindex` runs).
 */
export async function checkSearchLanguage(db: Database, language: string, log: LogPort): Promise<void> {
  await assertConfigurationExists(db, language);
  const rows = await db.$queryRaw<{ language: string }[]>`SELECT language FROM search_settings WHERE id = 1`;
  const stored = rows[0]?.language;
  if (stored === language) return;
  const indexed = await db.$queryRaw<
    { any: boolean }[]
  >`SELECT EXISTS (SELECT 1 FROM messages WHERE search_vector IS NOT NULL) AS any`;
  if (indexed[0]?.any !== true) {
    await db.$executeRaw`INSERT INTO search_settings (id, language) VALUES (1, ${language}) ON CONFLICT (id) DO UPDATE SET language = EXCLUDED.language`;
    return;
  }
  log.warn(
    { configured: language, indexed: stored },
    'SEARCH_LANGUAGE differs from the language the search index was built with: run `npm run search:reindex`; search uses the indexed language until then',
  );
}

/**
 * `npm run search:reindex`: makes `language` the index's configuration and rebuilds every message's vector with it,
 * a batch at a time (each batch its own statement, so the server can keep running meanwhile). Returns the count.
 */
export async function reindexSearch(db: Database, language: string, log: LogPort): Promise<number> {
  await assertConfigurationExists(db, language);
  await db.$executeRaw`INSERT INTO search_settings (id, language) VALUES (1, ${language}) ON CONFLICT (id) DO UPDATE SET language = EXCLUDED.language`;
  let after = '00000000-0000-0000-0000-000000000000';
  let total = 0;
  for (;;) {
    const rows = await db.$queryRaw<{ id: string }[]>`
      UPDATE messages m SET search_vector = CASE WHEN m.status = 'complete' AND m.deleted_at IS NULL
          THEN to_tsvector(${language}::regconfig, left(m.content, ${INDEXED_PREFIX_CHARS}::int)) END
      FROM (SELECT id FROM messages WHERE id > ${after}::uuid ORDER BY id LIMIT ${REINDEX_BATCH}::int) batch
      WHERE m.id = batch.id RETURNING m.id::text AS id`;
    if (rows.length === 0) return total;
    total += rows.length;
    after =
      rows
        .map((row) => row.id)
        .sort()
        .at(-1) ?? after;
    log.info({ reindexed: total }, 'search reindex progress');
  }
}
