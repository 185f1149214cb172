import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface TcpCutProxy {
  /** The proxy's port on 127.0.0.1, held from start to close (no other process can take it meanwhile). */
  port: number;
  /** Drops every connection and refuses new ones, as when the server behind it goes away. */
  cut(): void;
  /** Forwards new connections again. */
  restore(): void;
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of a server (Redis, say) that a test can cut and restore while the server itself keeps
 * running on its own port: an outage without stopping the server and starting it again on a port that might be
 * taken meanwhile.
 */
export async function startTcpCutProxy(target: { host: string; port: number }): Promise<TcpCutProxy> {
  const sockets = new Set<Socket>();
  let cut = false;
  const server = createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    sockets.add(client).add(upstream);
    const forget = () => {
      sockets.delete(client);
      sockets.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', forget).on('error', forget);
    upstream.on('close', forget).on('error', forget);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      cut = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
