import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpDeps } from '../http-deps';
import type { FacadeHttpDeps } from './facade-deps';
import { facadeRoutes } from './facade-routes';
import { openAIErrorHandler } from './openai-errors';

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** The /v1 router alone on a real port, with only what a refusal before any use case needs. */
async function serve(options: { closing: boolean }): Promise<string> {
  const facade = {
    serviceKeys: [],
    models: ['m'],
    threadHeaders: ['x-thread-id'],
    maxBodyBytes: 2048,
    serverToolNames: () => new Set<string>(),
    closing: () => options.closing,
  } as unknown as FacadeHttpDeps;
  // The credential is checked before the body is read: token `t` is a valid user's.
  const deps = {
    log: silent,
    tokens: {
      verify: (token: string) =>
        token === 't'
          ? Promise.resolve({ userId: 'u-facade-routes', kind: 'external', issuedAt: Date.now() })
          : Promise.reject(new Error('invalid token')),
    },
    erasures: { erasureOf: () => Promise.resolve(null) },
    threads: { ensureUser: () => Promise.resolve() },
  } as unknown as HttpDeps;
  const app = express();
  app.use('/v1', facadeRoutes(deps, facade), openAIErrorHandler(silent));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

describe('facadeRoutes', () => {
  it("answers 503 in OpenAI's shape while the server shuts down, with Retry-After", async () => {
    const response = await fetch(`${await serve({ closing: true })}/models`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('2');
    expect(await response.json()).toEqual({
      error: { message: 'The server is restarting; try again.', type: 'api_error', param: null, code: 'unavailable' },
    });
  });

  it("refuses bodies that are not JSON or too large, and a missing token, in OpenAI's shape", async () => {
    const base = await serve({ closing: false });
    const post = (body: string) =>
      fetch(`${base}/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: 'Bearer t' },
        body,
      });
    const malformed = await post('{"model":');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    const large = await post(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(4096) }] }));
    expect(large.status).toBe(413);
    const anonymous = await fetch(`${base}/models`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_api_key' } });
  });
});
