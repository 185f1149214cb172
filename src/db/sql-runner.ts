import type pg from 'pg';
import type { Prisma } from './generated/client';
import { preparedStatementName } from './prepared-statement';
import { storableText } from './storable-values';

/**
 * Raw SQL of the hot path, straight through the driver's pool (the one Prisma's adapter uses too). A profile of
 * the turn path put 13-19% of the server's CPU in Prisma's runtime, most of it around statements that were
 * already raw SQL: `$queryRaw` builds, interprets and maps each one in its query engine. Statements are still
 * written with `Prisma.sql` (the same tagged template, parameters never interpolated) and rows use the same
 * mappers; only the execution skips the ORM.
 *
 * Row values are the driver's: timestamptz as Date, jsonb parsed, int4 as number (count(*) must be cast to int:
 * int8 comes back as a string).
 */
export interface SqlRunner {
  /** The rows of a query. */
  rows<T>(query: Prisma.Sql): Promise<T[]>;
  /** The number of rows a statement changed (or returned). */
  run(query: Prisma.Sql): Promise<number>;
}

export function createSqlRunner(pool: pg.Pool): SqlRunner {
  const send = (query: Prisma.Sql) => {
    // `text` is a getter that joins the statement's parts anew on each read: read once (the context read is ~10 KB).
    const text = query.text;
    const name = preparedStatementName(text);
    // Text Postgres cannot store (NUL) made storable, whichever statement writes it (jsonb parameters are made
    // storable by jsonParameter, before they become JSON text).
    const values = (query.values as unknown[]).map((value) =>
      typeof value === 'string' ? storableText(value) : value,
    );
    return pool.query({ text, values, ...(name ? { name } : {}) });
  };
  return {
    async rows<T>(query: Prisma.Sql) {
      return (await send(query)).rows as T[];
    },
    async run(query) {
      return (await send(query)).rowCount ?? 0;
    },
  };
}
