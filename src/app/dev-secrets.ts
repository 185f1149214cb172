import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Development convenience: a secret generated once and kept in `DATA_DIR/<name>` (mode 0600),
 * so guest tokens survive restarts. Never used in production, where the variables are required.
 */
export async function loadOrCreateSecret(options: {
  dataDir: string;
  name: string;
  bytes?: number;
}): Promise<{ value: string; file: string; created: boolean }> {
  const file = path.resolve(options.dataDir, options.name);
  if (existsSync(file)) {
    return { value: (await readFile(file, 'utf8')).trim(), file, created: false };
  }
  await mkdir(path.dirname(file), { recursive: true });
  const value = randomBytes(options.bytes ?? 32).toString('base64url');
  await writeFile(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  await chmod(file, 0o600);
  return { value, file, created: true };
}
