import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import { findFreePort, run, startService, stopProcess } from './process-tools';
import { makeSocketDir } from './socket-dir';

/**
 * A running redis-server we started: `url` over loopback TCP (for redis-cli and other processes' tools),
 * `socketPath` its unix socket, which this application's own connections use (ioredis takes the path as its URL;
 * see EmbeddedPostgres for why).
 */
export interface EmbeddedRedis {
  url: string;
  socketPath: string;
  port: number;
  stop(): Promise<void>;
}

/** Thrown with one sentence that tells the user what to do. */
export class RedisUnavailableError extends Error {}

async function which(command: string): Promise<string | null> {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/bin', '/usr/sbin', '/usr/local/bin'])) {
    const candidate = path.join(dir, command);
    if (dir && existsSync(candidate)) return candidate;
  }
  return null;
}

/**
 * Finds `redis-server`, installing Debian's package when it is missing and we can (root + apt-get).
 * No npm package ships a Redis binary, and BullMQ needs a real one (Lua scripts).
 */
async function findRedisServer(log: (message: string) => void): Promise<string> {
  const found = await which('redis-server');
  if (found) return found;
  const aptGet = await which('apt-get');
  if (aptGet && userInfo().uid === 0) {
    log('redis-server is not installed: installing Debian package redis-server with apt-get (one time)');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    try {
      await run(aptGet, ['install', '-y', '--no-install-recommends', 'redis-server'], { env });
    } catch {
      await run(aptGet, ['update'], { env });
      await run(aptGet, ['install', '-y', '--no-install-recommends', 'redis-server'], { env });
    }
    const installed = await which('redis-server');
    if (installed) return installed;
  }
  throw new RedisUnavailableError(
    'Redis is required: install redis-server (e.g. `sudo apt-get install redis-server`) or set REDIS_URL to a Redis 6.2+ server.',
  );
}

/** Starts a local redis-server on a free loopback port with its data under `dataDir`, in its own process group. */
export async function startEmbeddedRedis(options: {
  dataDir: string;
  port?: number;
  persist?: boolean;
  log?: (message: string) => void;
}): Promise<EmbeddedRedis> {
  const log = options.log ?? (() => undefined);
  const binary = await findRedisServer(log);
  const dataDir = path.resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true });
  const port = options.port ?? (await findFreePort());
  const persistence =
    options.persist === false
      ? ['--save', '', '--appendonly', 'no']
      : ['--save', '60 1', '--appendonly', 'yes', '--appendfsync', 'everysec'];
  const socketDir = await makeSocketDir('chat-redis-');
  const socketPath = path.join(socketDir.path, 'redis.sock');
  let child: Awaited<ReturnType<typeof startService>>;
  try {
    child = await startService({
      name: 'redis-server',
      command: binary,
      args: [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--unixsocket',
        socketPath,
        '--unixsocketperm',
        '700',
        '--dir',
        dataDir,
        '--daemonize',
        'no',
        '--protected-mode',
        'yes',
        '--maxmemory-policy',
        'noeviction',
        ...persistence,
      ],
      isReady: (output) => output.includes('Ready to accept connections'),
    });
  } catch (error) {
    await socketDir.remove();
    throw error;
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    socketPath,
    stop: async () => {
      await stopProcess(child, 'SIGTERM', 15_000);
      await socketDir.remove();
    },
  };
}
