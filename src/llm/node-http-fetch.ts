import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';

/**
 * The `fetch` the OpenAI client (under @langchain/openai) sends model calls with: node:http(s) on keep-alive agents
 * instead of Node's built-in fetch. Measured per streamed chat call against a local stub (bench/README.md, issue 16):
 * the built-in fetch (undici with WHATWG streams for the request) cost 1.2-1.8 ms of CPU, this one 0.9-1.1 ms; the
 * response is still a standard `Response`, so the SDK parses it unchanged.
 *
 * What it does the same way as fetch: any status is a response (errors are the SDK's to raise), headers as received,
 * gzip/deflate/br bodies decoded, `signal` aborts the request or the body with the signal's reason (an AbortError),
 * network failures reject with Node's error (its `code`, e.g. ECONNREFUSED, is what the provider-error
 * classification reads). What it does not: redirects are returned, not followed (model endpoints answer directly),
 * and a body that is not a string or bytes (form uploads) goes to the built-in fetch.
 */
const agents = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
};

/** Statuses whose response has no body (the Response constructor refuses one). */
const NO_BODY = new Set([101, 204, 205, 304]);

function decoded(response: http.IncomingMessage): Readable {
  switch ((response.headers['content-encoding'] ?? '').toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return response.pipe(zlib.createGunzip());
    case 'deflate':
      return response.pipe(zlib.createInflate());
    case 'br':
      return response.pipe(zlib.createBrotliDecompress());
    default:
      return response;
  }
}

function headersOf(response: http.IncomingMessage): Headers {
  const headers = new Headers();
  const raw = response.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) headers.append(raw[index]!, raw[index + 1]!);
  return headers;
}

export function nodeHttpFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const body = init.body;
  if (input instanceof Request || (body != null && typeof body !== 'string' && !(body instanceof Uint8Array)))
    return fetch(input, init);
  const url = new URL(input);
  const agent = url.protocol === 'http:' || url.protocol === 'https:' ? agents[url.protocol] : null;
  if (!agent) return fetch(input, init);
  const signal = init.signal ?? null;
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  const method = (init.method ?? 'GET').toUpperCase();
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, name) => {
    headers[name] = value;
  });
  return new Promise<Response>((resolve, reject) => {
    let received: { response: http.IncomingMessage; stream: Readable | null } | null = null;
    const send = url.protocol === 'https:' ? https.request : http.request;
    const request = send(url, { method, headers, agent }, (response) => {
      const status = response.statusCode ?? 0;
      const stream = method === 'HEAD' || NO_BODY.has(status) ? null : decoded(response);
      received = { response, stream };
      // A connection lost mid-body fails the body's reader with Node's error (ECONNRESET).
      if (stream && stream !== response) response.on('error', (error) => stream.destroy(error));
      if (!stream) response.resume();
      resolve(
        new Response(stream ? (Readable.toWeb(stream) as ReadableStream<Uint8Array>) : null, {
          status,
          statusText: response.statusMessage ?? '',
          headers: headersOf(response),
        }),
      );
    });
    // Before the response the promise rejects with the signal's reason; after it, the body's reader fails with it.
    const onAbort = () => {
      const reason = signal?.reason as Error;
      received?.stream?.destroy(reason);
      received?.response.destroy(reason);
      request.destroy(reason);
    };
    const forget = () => signal?.removeEventListener('abort', onAbort);
    signal?.addEventListener('abort', onAbort, { once: true });
    // The listener goes with the response's end (or the request's, when no response came).
    request.on('response', (response: http.IncomingMessage) => response.once('close', forget));
    request.on('close', () => {
      if (!received) forget();
    });
    request.on('error', reject);
    request.end(body ?? undefined);
  });
}
