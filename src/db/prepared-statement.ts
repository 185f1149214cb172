import { createHash } from 'node:crypto';
import { Prisma } from './generated/client';

/**
 * Prepared statements for the long, hot statements (transcript search, the context read with auto-recall).
 *
 * Postgres parses, analyses and plans a statement each time it is sent unnamed. For the search's ranking, a
 * statement of some fifteen CTEs, that work took longer than executing it on a 10,000-message thread (bench:recall;
 * numbers in bench/README.md). A statement marked with `prepared(name, sql)` is sent to Postgres as a named
 * prepared statement: each pooled connection parses it once, and Postgres may keep a generic plan for it. Its name
 * carries a hash of its text, so two texts never share a name (node-postgres refuses that) and a changed text is a
 * new statement; the texts marked are few and fixed (values are parameters), so each connection keeps a handful.
 */
const MARK = /^\s*\/\* prepared:([a-z][a-z_]*) \*\//;

/** `sql` marked to be sent as a prepared statement named after `name` (lower case and underscores). */
export function prepared(name: string, sql: Prisma.Sql): Prisma.Sql {
  if (!/^[a-z][a-z_]*$/.test(name))
    throw new Error(`prepared statement name ${name}: lower case letters and underscores only`);
  return Prisma.sql`/* prepared:${Prisma.raw(name)} */ ${sql}`;
}

const names = new Map<string, string>();
/** At most this many texts are remembered (a fixed set in practice; the bound only guards the map). */
const NAMES_MAX = 256;

/**
 * The statement name node-postgres gets for `sql`: `<name>_<hash of the text>` for a marked statement, '' (an
 * unnamed statement, parsed each time) for every other one.
 */
export function preparedStatementName(sql: string): string {
  const mark = MARK.exec(sql);
  if (!mark) return '';
  let name = names.get(sql);
  if (name === undefined) {
    name = `${mark[1]}_${createHash('sha256').update(sql).digest('hex').slice(0, 16)}`;
    if (names.size >= NAMES_MAX) names.clear();
    names.set(sql, name);
  }
  return name;
}
