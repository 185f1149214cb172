import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/test-app';

describe('every /api request is bounded per user and in time', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { API_REQUESTS_PER_MINUTE: '5', REQUEST_TIMEOUT_MS: '1500' } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it("refuses a user's requests past API_REQUESTS_PER_MINUTE with 429 and Retry-After, and only that user's", async () => {
    const { token } = await app.guest();
    const statuses: number[] = [];
    for (let index = 0; index < 6; index += 1) statuses.push((await app.api('/api/threads', { token })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const refused = await app.api('/api/threads', { token });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThan(0);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
    const other = await app.guest();
    expect((await app.api('/api/threads', { token: other.token })).status).toBe(200);
  });

  it('cuts off a request whose body trickles in past REQUEST_TIMEOUT_MS with 408', async () => {
    const { token } = await app.guest();
    const port = Number(new URL(app.baseUrl).port);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let received = '';
      const started = Date.now();
      socket.on('data', (chunk) => (received += chunk.toString()));
      socket.on('close', () => resolve(`${received}\n(after ${Date.now() - started} ms)`));
      socket.on('error', reject);
      socket.write(
        `POST /api/threads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"title":',
      );
      // One byte a second: never the whole body.
      const drip = setInterval(() => socket.writable && socket.write(' '), 1000);
      socket.on('close', () => clearInterval(drip));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(Number(/after (\d+) ms/.exec(answer)![1])).toBeLessThan(10_000);
  });
});
