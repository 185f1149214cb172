import { SignJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuestSessionDto, ThreadDto } from '../../src/shared/api';
import { connectError, openTab, type Tab } from '../support/socket-client';
import { startTestApp, type TestApp } from '../support/test-app';

const ISSUER = 'https://host.example.com';
const AUDIENCE = 'split-context-chat';

/** A token as a host application would mint it, with any claims (no `exp` unless given). */
function hostToken(
  app: TestApp,
  claims: { sub?: string; exp?: number | string; iss?: string; aud?: string; [claim: string]: unknown },
): Promise<string> {
  const { sub = 'host-user-1', exp, iss, aud, ...rest } = claims;
  const jwt = new SignJWT(rest).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(sub).setIssuedAt();
  if (exp !== undefined) jwt.setExpirationTime(exp);
  if (iss) jwt.setIssuer(iss);
  if (aud) jwt.setAudience(aud);
  return jwt.sign(new TextEncoder().encode(app.authSecret));
}

async function status(app: TestApp, token: string): Promise<number> {
  return (await app.api('/api/threads', { token })).status;
}

async function refresh(
  app: TestApp,
  token: string,
): Promise<{ status: number; body: GuestSessionDto & { error?: { code: string; message: string } } }> {
  const response = await app.api('/api/auth/refresh', { method: 'POST', token });
  return {
    status: response.status,
    body: (await response.json()) as GuestSessionDto & { error?: { code: string; message: string } },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('bearer tokens with JWT_ISSUER and JWT_AUDIENCE', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('refuses a token without exp, on REST and on sockets', async () => {
    const forever = await hostToken(app, { iss: ISSUER, aud: AUDIENCE });
    expect(await status(app, forever)).toBe(401);
    const body = (await (await app.api('/api/threads', { token: forever })).json()) as {
      error: { code: string; message: string };
    };
    expect(body.error).toEqual({ code: 'UNAUTHORIZED', message: 'The token has no expiry (exp).' });
    const refused = await connectError(app, { token: forever });
    expect(refused.data?.code).toBe('UNAUTHORIZED');
  });

  it('accepts host tokens only with the configured issuer and audience', async () => {
    expect(await status(app, await hostToken(app, { iss: ISSUER, aud: AUDIENCE, exp: '1h' }))).toBe(200);
    expect(await status(app, await hostToken(app, { iss: 'https://evil.example.net', aud: AUDIENCE, exp: '1h' }))).toBe(
      401,
    );
    expect(await status(app, await hostToken(app, { aud: AUDIENCE, exp: '1h' }))).toBe(401);
    expect(await status(app, await hostToken(app, { iss: ISSUER, exp: '1h' }))).toBe(401);
    expect(await status(app, await hostToken(app, { iss: ISSUER, aud: 'another-service', exp: '1h' }))).toBe(401);
    expect(
      (
        await connectError(app, {
          token: await hostToken(app, { iss: 'https://evil.example.net', aud: AUDIENCE, exp: '1h' }),
        })
      ).data?.code,
    ).toBe('UNAUTHORIZED');
  });

  it('signs its own guest tokens with them, and refreshes guest tokens only', async () => {
    const guest = await app.guest();
    expect(decodeJwt(guest.token)).toMatchObject({ iss: ISSUER, aud: AUDIENCE, kind: 'guest' });
    expect(await status(app, guest.token)).toBe(200);
    const refreshed = await refresh(app, guest.token);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.userId).toBe(guest.userId);

    // Admin and host-minted tokens are not renewed here, whatever they say.
    const admin = await hostToken(app, {
      sub: 'alice-admin',
      role: 'admin',
      kind: 'external',
      iss: ISSUER,
      aud: AUDIENCE,
      exp: '1h',
    });
    const hostUser = await hostToken(app, { sub: 'host-user-7', iss: ISSUER, aud: AUDIENCE, exp: '1h' });
    const adminGuest = await hostToken(app, {
      sub: 'guest-x',
      role: 'admin',
      kind: 'guest',
      iss: ISSUER,
      aud: AUDIENCE,
      exp: '1h',
    });
    for (const token of [admin, hostUser, adminGuest]) {
      const answer = await refresh(app, token);
      expect(answer.status).toBe(403);
      expect(answer.body.error?.code).toBe('FORBIDDEN');
    }
    // A guest-looking token of another issuer is not refreshed either.
    expect(
      (
        await refresh(
          app,
          await hostToken(app, {
            sub: 'guest-y',
            kind: 'guest',
            iss: 'https://evil.example.net',
            aud: AUDIENCE,
            exp: '1h',
          }),
        )
      ).status,
    ).toBe(401);
  });
});

describe('guest sessions with short lifetimes', () => {
  const TTL_SECONDS = 3;
  const MAX_AGE_SECONDS = 9;
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { GUEST_TOKEN_TTL: `${TTL_SECONDS}s`, GUEST_MAX_AGE: `${MAX_AGE_SECONDS}s` } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('expire, refresh even just expired into the same user, and end for good at GUEST_MAX_AGE from the first token', async () => {
    const guest = await app.guest();
    const first = decodeJwt(guest.token);
    expect(first.exp! - first.iat!).toBe(TTL_SECONDS);
    expect(first.orig_iat).toBe(first.iat);
    const thread = (await (
      await app.api('/api/threads', { method: 'POST', token: guest.token, json: { title: 'kept' } })
    ).json()) as ThreadDto;

    // Expired: refused everywhere but the refresh, which gives the same user a new token (its threads stay).
    await sleep(TTL_SECONDS * 1000 + 1100);
    expect(await status(app, guest.token)).toBe(401);
    const renewed = await refresh(app, guest.token);
    expect(renewed.status).toBe(200);
    expect(renewed.body.userId).toBe(guest.userId);
    const threads = (await (await app.api('/api/threads', { token: renewed.body.token })).json()) as {
      threads: ThreadDto[];
    };
    expect(threads.threads.map((candidate) => candidate.id)).toEqual([thread.id]);

    // Refreshed again and again, no token outlives the session's maximum age from the first token; then it ends.
    let token = renewed.body.token;
    const ceiling = (first.orig_iat as number) + MAX_AGE_SECONDS;
    for (;;) {
      const claims = decodeJwt(token);
      expect(claims.orig_iat).toBe(first.orig_iat);
      expect(claims.exp!).toBeLessThanOrEqual(ceiling);
      await sleep(1000);
      const next = await refresh(app, token);
      if (next.status === 200) {
        expect(new Date(next.body.expiresAt).getTime() / 1000).toBe(decodeJwt(next.body.token).exp);
        token = next.body.token;
        continue;
      }
      expect(next.status).toBe(401);
      expect(next.body.error?.message).toMatch(/maximum age/);
      expect(Date.now() / 1000).toBeGreaterThanOrEqual(ceiling);
      break;
    }
  }, 60_000);

  it('disconnects a socket when its token expires, with a coded session-expired event first', async () => {
    const guest = await app.guest();
    const thread = (await (
      await app.api('/api/threads', { method: 'POST', token: guest.token, json: {} })
    ).json()) as ThreadDto;
    const tab: Tab = await openTab(app, guest.token);
    const joined = await tab.request('thread-join', { threadId: thread.id });
    expect(joined.response.ok).toBe(true);
    const disconnected = new Promise<{ reason: string; eventsBefore: number }>((resolve) => {
      tab.socket.once('disconnect', (reason) => resolve({ reason, eventsBefore: tab.events.length }));
    });
    const { reason, eventsBefore } = await disconnected;
    expect(reason).toBe('io server disconnect');
    const expired = tab.events.slice(0, eventsBefore).find((event) => event.type === 'session-expired');
    expect(expired?.payload).toMatchObject({
      error: { code: 'UNAUTHORIZED' },
      expiredAt: new Date(decodeJwt(guest.token).exp! * 1000).toISOString(),
    });
    expect(Date.now()).toBeGreaterThanOrEqual(decodeJwt(guest.token).exp! * 1000);

    // The client refreshes and connects again as the same user.
    const renewed = await refresh(app, guest.token);
    expect(renewed.status).toBe(200);
    const again = await openTab(app, renewed.body.token);
    expect((await again.request('thread-join', { threadId: thread.id })).response.ok).toBe(true);
    again.close();
    tab.close();
  }, 30_000);
});
