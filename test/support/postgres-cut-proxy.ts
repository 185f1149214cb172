import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface PostgresCutProxy {
  /** The database URL through the proxy. */
  url: string;
  /** Cuts at the first statement whose SQL `matches` (that statement never reaches Postgres). */
  cutAt(matches: (sql: string) => boolean): void;
  /** True once cut: every connection was dropped and new ones are refused, as when Postgres goes away. */
  readonly cut: boolean;
  /** Postgres is reachable again (and nothing is cut any more). */
  restore(): void;
  close(): Promise<void>;
}

/** The SQL text of a Parse ('P') or simple Query ('Q') message of the frontend protocol. */
function sqlOf(type: number, payload: Buffer): string | null {
  if (type === 0x51) return payload.toString('utf8', 0, Math.max(0, payload.indexOf(0)));
  if (type === 0x50) {
    const nameEnd = payload.indexOf(0);
    return payload.toString('utf8', nameEnd + 1, payload.indexOf(0, nameEnd + 1));
  }
  return null;
}

/**
 * A TCP proxy in front of the test Postgres that reads the frontend protocol and, at a chosen statement, drops
 * every connection and refuses new ones: Postgres becomes unreachable at an exact point of a request's work.
 */
export async function startPostgresCutProxy(databaseUrl: string): Promise<PostgresCutProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  let matcher: ((sql: string) => boolean) | null = null;
  let cut = false;
  const cutAll = () => {
    cut = true;
    for (const socket of sockets) socket.destroy();
  };
  const server: Server = createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    const forget = () => {
      sockets.delete(client);
      sockets.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', forget).on('error', forget);
    upstream.on('close', forget).on('error', forget);
    upstream.pipe(client);
    let pending = Buffer.alloc(0);
    let started = false;
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      let forwardUpTo = 0;
      for (;;) {
        const headerLength = started ? 5 : 4;
        if (pending.length - forwardUpTo < headerLength) break;
        const length = started ? pending.readInt32BE(forwardUpTo + 1) + 1 : pending.readInt32BE(forwardUpTo);
        if (pending.length - forwardUpTo < length) break;
        if (started && matcher) {
          const sql = sqlOf(pending[forwardUpTo]!, pending.subarray(forwardUpTo + 5, forwardUpTo + length));
          if (sql !== null && matcher(sql)) {
            cutAll();
            return;
          }
        }
        started = true;
        forwardUpTo += length;
      }
      if (forwardUpTo > 0) {
        upstream.write(pending.subarray(0, forwardUpTo));
        pending = pending.subarray(forwardUpTo);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    cutAt(matches) {
      matcher = matches;
    },
    get cut() {
      return cut;
    },
    restore() {
      matcher = null;
      cut = false;
    },
    async close() {
      cutAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
