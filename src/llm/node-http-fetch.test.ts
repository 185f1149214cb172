import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyProviderError } from './classify-provider-error';
import { nodeHttpFetch } from './node-http-fetch';

describe("nodeHttpFetch (the model client's HTTP)", () => {
  let server: http.Server;
  let base: string;
  const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  const closedEarly: string[] = [];
  let release: (() => void) | null = null;

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on('end', () => {
        seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
        response.on('close', () => {
          if (!response.writableFinished) closedEarly.push(request.url ?? '');
        });
        switch (request.url) {
          case '/stream':
            // The first chunk is flushed before the server ends: the reader must get it without waiting for the end.
            response.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req-1' });
            response.write('data: one\n\n');
            release = () => response.end('data: two\n\n');
            return;
          case '/limited':
            response.writeHead(429, { 'retry-after': '7', 'content-type': 'application/json' });
            response.end(JSON.stringify({ error: { message: 'slow down' } }));
            return;
          case '/gzip':
            response.writeHead(200, { 'content-encoding': 'gzip' });
            response.end(zlib.gzipSync('compressed text'));
            return;
          case '/empty':
            response.writeHead(204);
            response.end();
            return;
          case '/hang':
            response.writeHead(200);
            response.write('partial');
            return;
          default:
            response.writeHead(404);
            response.end('no');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends method, headers and body, and streams the response body as it arrives', async () => {
    const response = await nodeHttpFetch(`${base}/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
      body: '{"a":1}',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('req-1');
    expect(seen.at(-1)).toMatchObject({
      method: 'POST',
      url: '/stream',
      body: '{"a":1}',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    expect(decoder.decode((await reader.read()).value)).toBe('data: one\n\n');
    release?.();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += decoder.decode(chunk.value);
    expect(rest).toBe('data: two\n\n');
  });

  it('returns error statuses as responses with their headers, decodes gzip, and gives a 204 no body', async () => {
    const limited = await nodeHttpFetch(`${base}/limited`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect(await limited.json()).toEqual({ error: { message: 'slow down' } });
    expect(await (await nodeHttpFetch(`${base}/gzip`)).text()).toBe('compressed text');
    const empty = await nodeHttpFetch(`${base}/empty`, { method: 'DELETE' });
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
  });

  it("aborts: before the call with the signal's reason, and mid-body the reader fails and the server sees the close", async () => {
    const before = new AbortController();
    before.abort();
    await expect(nodeHttpFetch(`${base}/stream`, { signal: before.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });

    const during = new AbortController();
    const response = await nodeHttpFetch(`${base}/hang`, { signal: during.signal });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('partial');
    during.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
    await expect.poll(() => closedEarly).toContain('/hang');
  });

  it("rejects a refused connection with Node's error, which the provider-error classification calls a network failure", async () => {
    const unused = http.createServer();
    await new Promise<void>((resolve) => unused.listen(0, '127.0.0.1', resolve));
    const port = (unused.address() as AddressInfo).port;
    await new Promise((resolve) => unused.close(resolve));
    const error = await nodeHttpFetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      body: '{}',
    }).catch((failure: unknown) => failure);
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
    expect(classifyProviderError(new Error('Connection error.', { cause: error }))).toMatchObject({
      kind: 'network',
      retryable: true,
    });
  });
});
