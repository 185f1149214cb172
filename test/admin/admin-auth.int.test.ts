import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenService } from '../../src/auth/token-service';
import type { AuditPageDto } from '../../src/shared/admin-api';
import { openApiDocument } from '../../src/http/openapi/openapi-document';
import type { SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import { changedTables, databaseSnapshot } from '../support/database-snapshot';
import { classifyRoute, documented, fillPath, sampleOf, servedRoutes } from '../support/route-table';
import { startTestApp, type TestApp } from '../support/test-app';

const ADMIN_TOKEN = 'test-admin-token-0123456789';

/**
 * Every admin route, from the app's route table (a route added later is covered without being listed here), with its
 * parameters filled by real objects and a smallest valid body from the OpenAPI document.
 */
function adminRoutes(app: TestApp, values: Record<string, string>): { method: string; path: string; json?: unknown }[] {
  const routes = servedRoutes(app.application.app).filter((route) => classifyRoute(route) === 'admin');
  return routes.flatMap((route) => {
    const path = fillPath(route, values);
    const body = documented(openApiDocument(), route)?.body;
    const json = body ? sampleOf(body, { uuid: values['messages/{messageId}'] ?? '', text: 'overwritten' }) : undefined;
    // A mounted app (bull-board) answers below its mount point too: one path under it is tried as well.
    const below = documented(openApiDocument(), route) ? [] : [{ method: route.method, path: `${path}/api/queues` }];
    return [{ method: route.method, path, ...(json === undefined ? {} : { json }) }, ...below];
  });
}

function sessionCookie(response: Response): string {
  const header = response.headers.getSetCookie().find((cookie) => cookie.startsWith('admin_session='));
  if (!header) throw new Error('no admin_session cookie was set');
  return header;
}

describe('admin authentication', () => {
  let app: TestApp;
  let userToken: string;
  let adminJwt: string;
  let thread: ThreadDto;
  let userId: string;
  let values: Record<string, string>;

  beforeAll(async () => {
    // This file tries many wrong credentials on purpose: the failed-credential lockout is tested in test/security.
    app = await startTestApp({ env: { AUTH_FAILURE_LIMIT_PER_MINUTE: '1000' } });
    ({ token: userToken, userId } = await app.guest());
    adminJwt = await createTokenService(app.authSecret).sign({
      userId: 'alice-admin',
      role: 'admin',
      kind: 'external',
    });
    thread = (await (
      await app.api('/api/threads', { method: 'POST', token: userToken, json: { title: 'private' } })
    ).json()) as ThreadDto;
    const sent = await app.api(`/api/threads/${thread.id}/messages`, {
      method: 'POST',
      token: userToken,
      json: { content: 'hello' },
    });
    expect(sent.status).toBe(201);
    const [message] = ((await sent.json()) as SendMessageResponseDto).messages;
    values = {
      'threads/{id}': thread.id,
      'users/{userId}': userId,
      'messages/{messageId}': message?.id ?? '',
      'groups/{name}': 'interns',
      // A key id (16 hex characters of a service key's hash): refused before it is looked up.
      'service-keys/{keyId}': '0123456789abcdef',
    };
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('answers 401 on every admin route without admin credentials, and changes nothing', async () => {
    const forgedSession = 'admin_session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbi10b2tlbiJ9.c2lnbmF0dXJl';
    const routes = adminRoutes(app, values);
    expect(routes.map((route) => `${route.method} ${route.path}`)).toEqual(
      expect.arrayContaining([`DELETE /api/admin/users/${userId}`, 'GET /admin/jobs', 'GET /admin/jobs/api/queues']),
    );
    const before = await databaseSnapshot(app);
    for (const route of routes) {
      const attempts: { what: string; headers: Record<string, string> }[] = [
        { what: 'nothing', headers: {} },
        { what: 'a user token', headers: { Authorization: `Bearer ${userToken}` } },
        { what: 'a wrong admin token', headers: { Authorization: `Bearer ${ADMIN_TOKEN}x` } },
        { what: 'a forged session cookie', headers: { Cookie: forgedSession } },
        // The bootstrap token is a bearer credential, not a cookie value.
        { what: 'the raw token as cookie', headers: { Cookie: `admin_session=${ADMIN_TOKEN}` } },
      ];
      for (const attempt of attempts) {
        const response = await app.api(route.path, {
          method: route.method,
          headers: attempt.headers,
          ...(route.json ? { json: route.json } : {}),
        });
        expect({ route: `${route.method} ${route.path}`, with: attempt.what, status: response.status }).toEqual({
          route: `${route.method} ${route.path}`,
          with: attempt.what,
          status: 401,
        });
        if (route.path.startsWith('/api/'))
          expect(((await response.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
      }
    }
    // Nothing was changed by the refused writes (the erasure of the user among them).
    expect(changedTables(before, await databaseSnapshot(app))).toEqual([]);
    const detail = await app.api(`/api/admin/threads/${thread.id}`, { token: ADMIN_TOKEN });
    expect(((await detail.json()) as { context: { revision: number } }).context.revision).toBe(0);
  });

  it('accepts the bootstrap token and an admin JWT as bearer credentials', async () => {
    for (const token of [ADMIN_TOKEN, adminJwt]) {
      const response = await app.api('/api/admin/threads', { token });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { threads: { id: string; owner: { id: string } }[] };
      expect(body.threads.map((row) => row.id)).toContain(thread.id);
    }
  });

  it('opens a session cookie from a credential, serves admin routes and the job dashboard with it, and ends it', async () => {
    expect((await app.api('/api/admin/session', { method: 'POST', json: { token: userToken } })).status).toBe(401);

    const opened = await app.api('/api/admin/session', { method: 'POST', json: { token: adminJwt } });
    expect(opened.status).toBe(201);
    expect(await opened.json()).toMatchObject({ actor: 'alice-admin' });
    const setCookie = sessionCookie(opened);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    expect(setCookie).not.toMatch(/;\s*Secure/i); // plain http here; Secure when the request came over https
    const value = setCookie.split(';')[0] ?? '';
    expect(value).not.toContain(adminJwt);
    const cookie = { Cookie: value };

    expect((await app.api('/api/admin/queues', { headers: cookie })).status).toBe(200);
    const dashboard = await app.api('/admin/jobs', { headers: cookie });
    expect(dashboard.status).toBe(200);
    expect(await dashboard.text()).toContain('__UI_CONFIG__');
    const dashboardQueues = await app.api('/admin/jobs/api/queues', { headers: cookie });
    expect(dashboardQueues.status).toBe(200);
    expect(JSON.stringify(await dashboardQueues.json())).toContain('summary');

    const ended = await app.api('/api/admin/session', { method: 'DELETE', headers: cookie });
    expect(ended.status).toBe(204);
    expect(ended.headers.getSetCookie().join('\n')).toMatch(/admin_session=;.*Expires=Thu, 01 Jan 1970/i);

    const audit = (await (await app.api('/api/admin/audit', { token: ADMIN_TOKEN })).json()) as AuditPageDto;
    const actions = audit.entries.filter((entry) => entry.actor === 'alice-admin').map((entry) => entry.action);
    expect(actions).toEqual(['admin.session-ended', 'admin.session-started']);
  });

  it('never lets a session outlive the admin JWT that opened it (a short-lived JWT opens a short session)', async () => {
    const shortJwt = await createTokenService(app.authSecret).sign(
      { userId: 'bob-admin', role: 'admin', kind: 'external' },
      2,
    );
    const tokenExpiry = decodeJwt(shortJwt).exp! * 1000;
    const opened = await app.api('/api/admin/session', { method: 'POST', json: { token: shortJwt } });
    expect(opened.status).toBe(201);
    const { expiresAt } = (await opened.json()) as { expiresAt: string };
    expect(Date.parse(expiresAt)).toBeLessThanOrEqual(tokenExpiry);
    const setCookie = sessionCookie(opened);
    const cookieExpiry = Date.parse(/Expires=([^;]+)/i.exec(setCookie)?.[1] ?? '');
    expect(cookieExpiry).toBeLessThanOrEqual(tokenExpiry);
    const cookie = { Cookie: setCookie.split(';')[0] ?? '' };
    expect((await app.api('/api/admin/threads', { headers: cookie })).status).toBe(200);
    // Past the JWT's exp, the session (replayed by a client that ignores the cookie's Expires) is refused too.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, tokenExpiry - Date.now()) + 1100));
    expect((await app.api('/api/admin/threads', { headers: cookie })).status).toBe(401);
    // A long-lived JWT still gets the full session TTL (8 h), not more.
    const long = (await (
      await app.api('/api/admin/session', { method: 'POST', json: { token: adminJwt } })
    ).json()) as { expiresAt: string };
    expect(Date.parse(long.expiresAt) - Date.now()).toBeGreaterThan(7.9 * 3600_000);
    expect(Date.parse(long.expiresAt) - Date.now()).toBeLessThanOrEqual(8 * 3600_000);
  });

  it("refuses an erased admin's JWT (issued before the erasure) at sign-in, as a bearer and in a session it opened", async () => {
    const carolJwt = await createTokenService(app.authSecret).sign({
      userId: 'carol-admin',
      role: 'admin',
      kind: 'external',
    });
    const opened = await app.api('/api/admin/session', { method: 'POST', json: { token: carolJwt } });
    expect(opened.status).toBe(201);
    const cookie = { Cookie: sessionCookie(opened).split(';')[0] ?? '' };
    // iat has seconds: the erasure comes a second after the token was issued.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await app.api('/api/admin/users/carol-admin', { method: 'DELETE', token: ADMIN_TOKEN })).status).toBe(204);

    const again = await app.api('/api/admin/session', { method: 'POST', json: { token: carolJwt } });
    expect(again.status).toBe(401);
    expect((await app.api('/api/admin/threads', { token: carolJwt })).status).toBe(401);
    expect((await app.api('/api/admin/threads', { headers: cookie })).status).toBe(401);
    // A token issued after the erasure is the host's word again (as for a host-minted user on /api).
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const fresh = await createTokenService(app.authSecret).sign({
      userId: 'carol-admin',
      role: 'admin',
      kind: 'external',
    });
    expect((await app.api('/api/admin/threads', { token: fresh })).status).toBe(200);
  });

  it('opens a session from the bootstrap token, audited as admin-token', async () => {
    const opened = await app.api('/api/admin/session', { method: 'POST', json: { token: ADMIN_TOKEN } });
    expect(opened.status).toBe(201);
    const value = sessionCookie(opened).split(';')[0] ?? '';
    expect(value).not.toContain(ADMIN_TOKEN);
    expect((await app.api('/api/admin/threads', { headers: { Cookie: value } })).status).toBe(200);
    const audit = (await (await app.api('/api/admin/audit', { headers: { Cookie: value } })).json()) as AuditPageDto;
    expect(audit.entries[0]).toMatchObject({
      actor: 'admin-token',
      action: 'admin.session-started',
      threadId: null,
      details: { via: 'admin-token' },
    });
  });
});
