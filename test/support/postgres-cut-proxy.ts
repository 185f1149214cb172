import type { Socket } from 'node:net';
import { startTcpCutProxy } from './tcp-cut-proxy';

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
 * Forwards a client's frontend-protocol messages whole, reading each one's SQL: at the first that `matcher()` matches,
 * the proxy is cut instead (that message never reaches Postgres).
 */
function relayUntilMatch(matcher: () => ((sql: string) => boolean) | null) {
  return (client: Socket, upstream: Socket, proxy: { cut(): void }): void => {
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
        const matches = matcher();
        if (started && matches) {
          const sql = sqlOf(pending[forwardUpTo]!, pending.subarray(forwardUpTo + 5, forwardUpTo + length));
          if (sql !== null && matches(sql)) {
            proxy.cut();
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
  };
}

/**
 * A TCP cut proxy (startTcpCutProxy) in front of the test Postgres that reads the frontend protocol and, at a chosen
 * statement, drops every connection and refuses new ones: Postgres becomes unreachable at an exact point of a
 * request's work.
 */
export async function startPostgresCutProxy(databaseUrl: string): Promise<PostgresCutProxy> {
  const target = new URL(databaseUrl);
  let matcher: ((sql: string) => boolean) | null = null;
  const proxy = await startTcpCutProxy(
    { host: target.hostname, port: Number(target.port || 5432) },
    relayUntilMatch(() => matcher),
  );
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return {
    url: url.toString(),
    cutAt(matches) {
      matcher = matches;
    },
    get cut() {
      return proxy.isCut;
    },
    restore() {
      matcher = null;
      proxy.restore();
    },
    async close() {
      proxy.cut();
      await proxy.close();
    },
  };
}
