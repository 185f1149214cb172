import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ThreadDto } from '../../src/shared/api';
import { startTestApp, type TestApp } from '../support/test-app';

const ADMIN_TOKEN = 'test-admin-token-0123456789';

describe('per-address limits behind a trusted proxy (TRUST_PROXY)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      env: {
        TRUST_PROXY: 'loopback',
        GUEST_RATE_LIMIT_PER_MINUTE: '2',
        ADMIN_SIGN_IN_LIMIT_PER_MINUTE: '2',
        AUTH_FAILURE_LIMIT_PER_MINUTE: '3',
      },
    });
  });
  afterAll(async () => {
    await app?.stop();
  });

  const from = (address: string) => ({ 'X-Forwarded-For': address });
  const guestFrom = async (address: string) =>
    (await app.api('/api/auth/guest', { method: 'POST', headers: from(address) })).status;

  it('keys guests by the client behind the proxy, IPv6 by its /64', async () => {
    expect([await guestFrom('2001:db8:7:1::1'), await guestFrom('2001:db8:7:1::2')]).toEqual([201, 201]);
    // Another address of the same /64 is the same client.
    expect(await guestFrom('2001:db8:7:1:ffff::9')).toBe(429);
    // The next /64 and an IPv4 client have their own budgets.
    expect(await guestFrom('2001:db8:7:2::1')).toBe(201);
    expect(await guestFrom('198.51.100.20')).toBe(201);
  });

  it('limits failed admin and metrics credentials per address, then refuses even the right one', async () => {
    const wrong = { Authorization: 'Bearer not-the-admin-token-000000' };
    const attacker = '203.0.113.50';
    expect((await app.api('/api/admin/threads', { headers: { ...from(attacker), ...wrong } })).status).toBe(401);
    expect((await app.api('/metrics', { headers: { ...from(attacker), ...wrong } })).status).toBe(401);
    expect(
      (
        await app.api('/api/admin/session', {
          method: 'POST',
          headers: from(attacker),
          json: { token: 'guessing-guessing-guessing' },
        })
      ).status,
    ).toBe(401);
    // Three failures (AUTH_FAILURE_LIMIT_PER_MINUTE=3): the address is locked out of every admin credential.
    const locked = await app.api('/api/admin/threads', {
      headers: { ...from(attacker), Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(locked.status).toBe(429);
    expect(await locked.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    expect(locked.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(
      (await app.api('/metrics', { headers: { ...from(attacker), Authorization: `Bearer ${ADMIN_TOKEN}` } })).status,
    ).toBe(429);
    // Another address is not affected.
    expect(
      (
        await app.api('/api/admin/threads', {
          headers: { ...from('203.0.113.51'), Authorization: `Bearer ${ADMIN_TOKEN}` },
        })
      ).status,
    ).toBe(200);
  });

  it('gives the admin sign-in its own limiter, apart from guest creation', async () => {
    const address = '192.0.2.77';
    // Guests from this address used up (GUEST_RATE_LIMIT_PER_MINUTE=2) ...
    expect([await guestFrom(address), await guestFrom(address), await guestFrom(address)]).toEqual([201, 201, 429]);
    // ... the admin can still sign in, twice a minute (ADMIN_SIGN_IN_LIMIT_PER_MINUTE=2).
    const signIn = () =>
      app.api('/api/admin/session', { method: 'POST', headers: from(address), json: { token: ADMIN_TOKEN } });
    expect([(await signIn()).status, (await signIn()).status, (await signIn()).status]).toEqual([201, 201, 429]);
  });
});

describe('without TRUST_PROXY', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { GUEST_RATE_LIMIT_PER_MINUTE: '2' } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('ignores X-Forwarded-For: a client cannot claim fresh addresses', async () => {
    const statuses: number[] = [];
    for (let index = 0; index < 3; index += 1) {
      statuses.push(
        (
          await app.api('/api/auth/guest', {
            method: 'POST',
            headers: { 'X-Forwarded-For': `198.51.100.${index + 1}` },
          })
        ).status,
      );
    }
    expect(statuses).toEqual([201, 201, 429]);
  });

  it('sends CORS credentials only when configured', async () => {
    const other = await startTestApp({ env: { CORS_ORIGINS: 'https://chat.example.com' } });
    const withCredentials = await startTestApp({
      env: { CORS_ORIGINS: 'https://chat.example.com', CORS_CREDENTIALS: 'true' },
    });
    try {
      const plain = await other.api('/api/info', { headers: { Origin: 'https://chat.example.com' } });
      expect(plain.headers.get('access-control-allow-origin')).toBe('https://chat.example.com');
      expect(plain.headers.get('access-control-allow-credentials')).toBeNull();
      const credentialed = await withCredentials.api('/api/info', { headers: { Origin: 'https://chat.example.com' } });
      expect(credentialed.headers.get('access-control-allow-credentials')).toBe('true');
    } finally {
      await other.stop();
      await withCredentials.stop();
    }
  });
});

describe('the admin session cookie', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  async function signIn(target: TestApp): Promise<Response> {
    const response = await target.api('/api/admin/session', { method: 'POST', json: { token: ADMIN_TOKEN } });
    expect(response.status).toBe(201);
    return response;
  }
  const cookieOf = (response: Response) => (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';

  it('requires a same-origin Origin on cookie-authenticated changes, bodyless POSTs included', async () => {
    const { token } = await app.guest();
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    const cookie = cookieOf(await signIn(app));
    const summarize = (headers: Record<string, string>) =>
      app.api(`/api/admin/threads/${thread.id}/summarize`, { method: 'POST', headers: { Cookie: cookie, ...headers } });
    const missing = await summarize({});
    expect(missing.status).toBe(403);
    expect(await missing.json()).toMatchObject({ error: { code: 'FORBIDDEN' } });
    expect((await summarize({ Origin: 'https://evil.example.net' })).status).toBe(403);
    expect(
      (
        await app.api(`/api/admin/threads/${thread.id}/settings`, {
          method: 'PATCH',
          headers: { Cookie: cookie, Origin: 'null' },
          json: { keep: 'messages=4' },
        })
      ).status,
    ).toBe(403);
    expect((await summarize({ Origin: app.baseUrl })).status).toBe(202);
    // Reads need no Origin; bearer callers (scripts) are not riding a cookie.
    expect((await app.api('/api/admin/threads', { headers: { Cookie: cookie } })).status).toBe(200);
    expect(
      (await app.api(`/api/admin/threads/${thread.id}/summarize`, { method: 'POST', token: ADMIN_TOKEN })).status,
    ).toBe(202);
    const audit = await app.api(`/api/admin/audit?threadId=${thread.id}`, { token: ADMIN_TOKEN });
    expect(((await audit.json()) as { entries: unknown[] }).entries).toHaveLength(2);
  });

  it('is Secure in production, even over plain HTTP behind a TLS proxy', async () => {
    expect(await signIn(app).then((response) => response.headers.get('set-cookie'))).not.toMatch(/;\s*Secure/i);
    const production = await startTestApp({
      env: {
        NODE_ENV: 'production',
        AUTH_SECRET: randomBytes(32).toString('hex'),
        ADMIN_TOKEN: randomBytes(24).toString('hex'),
        METRICS_TOKEN: randomBytes(24).toString('hex'),
        OFFLINE_MODEL: 'allow',
      },
    });
    try {
      const cookie = (await signIn(production)).headers.get('set-cookie') ?? '';
      expect(cookie).toMatch(/^admin_session=/);
      expect(cookie).toMatch(/;\s*Secure/i);
      expect(cookie).toMatch(/;\s*HttpOnly/i);
      expect(cookie).toMatch(/;\s*SameSite=Strict/i);
    } finally {
      await production.stop();
    }
  });
});
