import { describe, expect, it } from 'vitest';
import { Prisma } from './generated/client';
import { prepared, preparedStatementName } from './prepared-statement';

describe('prepared statements', () => {
  it('names a marked statement after its name and text, and leaves every other statement unnamed', () => {
    const search = prepared('search_for_model', Prisma.sql`SELECT seq FROM messages WHERE thread_id = ${'t'}::uuid`);
    const name = preparedStatementName(search.text);
    expect(name).toMatch(/^search_for_model_[0-9a-f]{16}$/);
    expect(preparedStatementName(search.text)).toBe(name);
    // Another text under the same name is another statement (node-postgres refuses one name for two texts).
    const other = prepared(
      'search_for_model',
      Prisma.sql`SELECT seq FROM messages WHERE thread_id = ${'t'}::uuid AND seq < ${1}::int`,
    );
    expect(preparedStatementName(other.text)).toMatch(/^search_for_model_/);
    expect(preparedStatementName(other.text)).not.toBe(name);
    expect(preparedStatementName('SELECT 1')).toBe('');
    expect(preparedStatementName(`EXPLAIN ${search.text}`)).toBe('');
    expect(() => prepared('Search; DROP', Prisma.sql`SELECT 1`)).toThrow(/lower case/);
  });
});
