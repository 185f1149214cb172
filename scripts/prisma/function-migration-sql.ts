import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The migration text that applies the named SQL functions' files (prisma/functions/<name>.sql): each file's
 * CREATE OR REPLACE with its doc comment, without the file's own header (the lines before its first bare `--`).
 * Empty for no names; throws for a name without a file.
 */
export async function functionMigrationSql(functionsDir: string, names: readonly string[]): Promise<string> {
  const parts: string[] = [];
  for (const name of names) {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`"${name}" is not a SQL function name`);
    const text = await readFile(path.join(functionsDir, `${name}.sql`), 'utf8').catch((error: unknown) => {
      throw new Error(`no prisma/functions/${name}.sql: write the function's file first`, { cause: error });
    });
    const lines = text.split('\n');
    const headerEnd = lines.findIndex((line) => line.trim() === '--');
    parts.push(
      `${lines
        .slice(headerEnd + 1)
        .join('\n')
        .trimEnd()}\n`,
    );
  }
  return parts.join('\n');
}
