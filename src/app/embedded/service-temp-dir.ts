import { chmod, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A new temporary directory for the data of services we start (tests, benchmarks, scripts). `mkdtemp` makes it
 * 0700; as root, Postgres runs as the `postgres` user, which must traverse it to reach its data directory: 0711
 * lets it through without letting anyone list it.
 */
export async function makeServiceTempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  await chmod(dir, 0o711);
  return dir;
}
