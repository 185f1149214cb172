import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ensureGuestSession, renewDelayMs } from './guest-session';

describe('renewDelayMs', () => {
  const now = Date.parse('2026-01-01T00:00:00.000Z');
  const at = (secondsFromNow: number) => ({
    userId: 'guest-1',
    token: 't',
    expiresAt: new Date(now + secondsFromNow * 1000).toISOString(),
  });

  it('renews a minute before a long-lived token ends', () => {
    expect(renewDelayMs(at(30 * 86_400), now)).toBe(Math.min(2 ** 31 - 1, 30 * 86_400_000 - 60_000));
    expect(renewDelayMs(at(3600), now)).toBe(3600_000 - 60_000);
  });

  it('renews a short-lived token at four fifths of its life, and an expired or unknown one at once', () => {
    expect(renewDelayMs(at(10), now)).toBe(8000);
    expect(renewDelayMs(at(-5), now)).toBe(0);
    expect(renewDelayMs({ userId: 'guest-1', token: 't', expiresAt: null }, now)).toBe(0);
  });
});

/** A server's guest endpoints: each POST /api/auth/guest signs in a new guest; a refresh keeps the guest. */
function fakeServer(options: { refuseRefresh?: boolean } = {}) {
  const calls: string[] = [];
  let guests = 0;
  const answer = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
  const fetchImpl = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const path = String(input);
    calls.push(`${init?.method ?? 'GET'} ${path}`);
    // The server answers after a moment, as a real one does: callers in the same tick all wait together.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const expiresAt = new Date(Date.now() + 3600_000).toISOString();
    if (path === '/api/auth/guest') {
      guests += 1;
      return answer(201, { userId: `guest-${guests}`, token: `token-${guests}`, expiresAt });
    }
    if (path === '/api/auth/refresh') {
      if (options.refuseRefresh)
        return answer(401, {
          error: { code: 'UNAUTHORIZED', message: 'This guest session has reached its maximum age; start a new one.' },
        });
      const token = new Headers(init?.headers).get('Authorization')?.replace('Bearer ', '') ?? '';
      return answer(200, { userId: token.replace('token-', 'guest-'), token: `${token}-renewed`, expiresAt });
    }
    return answer(404, { error: { code: 'NOT_FOUND', message: 'No such route.' } });
  };
  return { calls, fetchImpl };
}

function memoryStorage(): Storage {
  const values = new Map<string, string>();
  return {
    get length() {
      return values.size;
    },
    clear: () => values.clear(),
    getItem: (key) => values.get(key) ?? null,
    key: (index) => [...values.keys()][index] ?? null,
    removeItem: (key) => values.delete(key),
    setItem: (key, value) => values.set(key, String(value)),
  };
}

describe('ensureGuestSession', () => {
  beforeEach(() => {
    vi.stubGlobal('localStorage', memoryStorage());
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('signs in one guest on a first visit even when asked twice at once (StrictMode runs the mount effect twice)', async () => {
    const server = fakeServer();
    vi.stubGlobal('fetch', server.fetchImpl);
    const [first, second] = await Promise.all([ensureGuestSession(), ensureGuestSession()]);
    // Two guests here meant the first thread was created as one and joined over a socket of the other.
    expect(server.calls).toEqual(['POST /api/auth/guest']);
    expect(second).toEqual(first);
    expect(JSON.parse(localStorage.getItem('split-context-chat.session') ?? 'null')).toMatchObject({
      userId: first.userId,
      token: first.token,
    });
  });

  it('keeps a returning guest: the stored token is refreshed, once, and no new guest starts', async () => {
    const server = fakeServer();
    vi.stubGlobal('fetch', server.fetchImpl);
    const first = await ensureGuestSession();
    const [again, meanwhile] = await Promise.all([ensureGuestSession(), ensureGuestSession()]);
    expect(server.calls).toEqual(['POST /api/auth/guest', 'POST /api/auth/refresh']);
    expect(again.userId).toBe(first.userId);
    expect(again.token).toBe(`${first.token}-renewed`);
    expect(meanwhile).toEqual(again);
  });

  it('starts a new guest when the server refuses the stored session (past its maximum age)', async () => {
    localStorage.setItem(
      'split-context-chat.session',
      JSON.stringify({ userId: 'guest-old', token: 'token-old', expiresAt: null }),
    );
    const server = fakeServer({ refuseRefresh: true });
    vi.stubGlobal('fetch', server.fetchImpl);
    const session = await ensureGuestSession();
    expect(server.calls).toEqual(['POST /api/auth/refresh', 'POST /api/auth/guest']);
    expect(session.userId).toBe('guest-1');
  });
});
