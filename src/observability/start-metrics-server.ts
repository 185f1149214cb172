import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

/**
 * `/metrics` alone on its own port, without auth: for worker processes (no HTTP app) and for scraping on a
 * private network. Bind it to an address the public cannot reach.
 */
export async function startMetricsServer(options: {
  registry: Registry;
  port: number;
  host: string;
}): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || (request.url ?? '').split('?')[0] !== '/metrics') {
      response.writeHead(404).end();
      return;
    }
    options.registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'Content-Type': options.registry.contentType }).end(text);
      },
      (error: unknown) => {
        response.writeHead(500).end(String(error));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  return {
    server,
    port: typeof address === 'object' && address ? address.port : options.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
