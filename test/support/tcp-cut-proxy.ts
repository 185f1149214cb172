import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface TcpCutProxy {
  /** The proxy's port on 127.0.0.1, held from start to close (no other process can take it meanwhile). */
  port: number;
  /** Drops every connection and refuses new ones, as when the server behind it goes away. */
  cut(): void;
  /** True from a cut until restore. */
  readonly isCut: boolean;
  /** Forwards new connections again. */
  restore(): void;
  close(): Promise<void>;
}

/**
 * How a connection's client bytes reach the server: piped as they come by default; a protocol-reading relay (the
 * Postgres cut proxy's) forwards them itself and may cut the proxy at a point of the conversation.
 */
export type ClientRelay = (client: Socket, upstream: Socket, proxy: { cut(): void }) => void;

const pipeClient: ClientRelay = (client, upstream) => {
  client.pipe(upstream);
};

/**
 * A TCP proxy in front of a server (Redis, say) that a test can cut and restore while the server itself keeps
 * running on its own port: an outage without stopping the server and starting it again on a port that might be
 * taken meanwhile.
 */
export async function startTcpCutProxy(
  target: { host: string; port: number },
  relay: ClientRelay = pipeClient,
): Promise<TcpCutProxy> {
  const sockets = new Set<Socket>();
  let isCut = false;
  const cut = () => {
    isCut = true;
    for (const socket of sockets) socket.destroy();
  };
  const server = createServer((client) => {
    if (isCut) {
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
    upstream.pipe(client);
    relay(client, upstream, { cut });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut,
    get isCut() {
      return isCut;
    },
    restore() {
      isCut = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
