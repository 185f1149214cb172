import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A unix socket path may hold about 107 bytes (sun_path), so a service's socket cannot live in its data directory
 * under a deep checkout. Sockets go in a fresh directory under the temporary directory (or /tmp when that one's
 * path is long), made per start and removed at stop.
 */
const MAX_PARENT_LENGTH = 60;

export interface SocketDir {
  path: string;
  remove(): Promise<void>;
}

/**
 * A new 0700 directory for a service's unix socket, owned by `owner` when the service runs as another user (root
 * starting Postgres as `postgres`): the service creates its socket there, and root reaches it anyway.
 */
export async function makeSocketDir(prefix: string, owner?: { uid: number; gid: number }): Promise<SocketDir> {
  const parent = tmpdir().length <= MAX_PARENT_LENGTH ? tmpdir() : '/tmp';
  const dir = await mkdtemp(path.join(parent, prefix));
  if (owner) await chown(dir, owner.uid, owner.gid);
  return { path: dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
