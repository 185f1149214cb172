import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Sends a request announcing `Content-Length: 9000000` with only its first kilobyte of body, which never finishes,
 * and resolves with the status line of the answer (or 'no answer' after `waitMs`).
 */
function announceLargeBody(
  baseUrl: string,
  input: { path: string; headers?: Record<string, string>; waitMs?: number },
): Promise<string> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve('no answer');
    }, input.waitMs ?? 3000);
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      const statusLine = received.split('\r\n')[0];
      if (received.includes('\r\n')) {
        clearTimeout(timer);
        socket.destroy();
        resolve(statusLine ?? '');
      }
    });
    socket.on('connect', () => {
      const headers = {
        Host: url.host,
        'Content-Type': 'application/json',
        'Content-Length': '9000000',
        ...input.headers,
      };
      const head = Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}`)
        .join('\r\n');
      socket.write(`POST ${input.path} HTTP/1.1\r\n${head}\r\n\r\n{"model":"m","messages":[${' '.repeat(1000)}`);
    });
  });
}

describe('a large body announced without credentials is refused before it arrives', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({
      env: {
        AUTH_FAILURE_LIMIT_PER_MINUTE: '6',
        TOOL_WEBHOOK_SECRET: 'a-runner-secret-of-at-least-32-characters',
        PUBLIC_BASE_URL: 'https://chat.example.com/',
        EXTERNAL_TOOLS: JSON.stringify([
          { name: 'render_video', description: 'Renders a video.', mode: 'external', url: 'http://127.0.0.1:9/run' },
        ]),
      },
    });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('/v1/chat/completions: 401 at once without a token and with a forged one', async () => {
    for (const headers of [{}, { Authorization: 'Bearer not-a-token' }] as Record<string, string>[]) {
      expect(await announceLargeBody(app.baseUrl, { path: '/v1/chat/completions', headers })).toMatch(/^HTTP\/1.1 401/);
    }
  });

  it("a runner's callback: 401 at once without signature headers, and for a run no runner serves", async () => {
    const signed = { 'x-tool-timestamp': String(Date.now()), 'x-tool-signature': `v2=${'0'.repeat(64)}` };
    for (const headers of [{}, signed] as Record<string, string>[]) {
      for (const kind of ['progress', 'result']) {
        const path = `/api/tool-runs/${randomUUID()}/${kind}`;
        expect(await announceLargeBody(app.baseUrl, { path, headers })).toMatch(/^HTTP\/1.1 401/);
      }
    }
  });

  it('an address past AUTH_FAILURE_LIMIT_PER_MINUTE failed callbacks gets 429, before its body too', async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 8; attempt += 1) {
      const response = await app.api(`/api/tool-runs/${randomUUID()}/result`, {
        method: 'POST',
        headers: { 'x-tool-timestamp': String(Date.now()), 'x-tool-signature': `v2=${'0'.repeat(64)}` },
        json: { status: 'failed', error: 'forged' },
      });
      statuses.push(response.status);
    }
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(6);
    const signed = { 'x-tool-timestamp': String(Date.now()), 'x-tool-signature': `v2=${'0'.repeat(64)}` };
    expect(
      await announceLargeBody(app.baseUrl, { path: `/api/tool-runs/${randomUUID()}/result`, headers: signed }),
    ).toMatch(/^HTTP\/1.1 429/);
  });
});
