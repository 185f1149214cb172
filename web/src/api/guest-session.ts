import type { GuestSessionDto } from '../../../src/shared/api';
import { ApiError } from './api-error';
import { requestJson } from './request-json';

export interface Session {
  userId: string;
  token: string;
  /** ISO time the token expires (null for a session stored by an older version: refreshed at once). */
  expiresAt: string | null;
}

const STORAGE_KEY = 'split-context-chat.session';

function readStored(): Session | null {
  try {
    const value = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null') as Partial<Session> | null;
    if (!value || typeof value.token !== 'string' || typeof value.userId !== 'string') return null;
    return {
      userId: value.userId,
      token: value.token,
      expiresAt: typeof value.expiresAt === 'string' ? value.expiresAt : null,
    };
  } catch {
    return null;
  }
}

function store(session: GuestSessionDto): Session {
  const kept: Session = { userId: session.userId, token: session.token, expiresAt: session.expiresAt };
  localStorage.setItem(STORAGE_KEY, JSON.stringify(kept));
  return kept;
}

/**
 * The next token of this browser's guest session (POST /api/auth/refresh, which also takes a token that just
 * expired). A session past its maximum age is refused: a new guest starts. Offline, the error is thrown.
 */
export async function renewGuestSession(current: Session): Promise<Session> {
  try {
    return store(await requestJson<GuestSessionDto>('/api/auth/refresh', { method: 'POST', token: current.token }));
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'UNAUTHORIZED') throw error;
  }
  return store(await requestJson<GuestSessionDto>('/api/auth/guest', { method: 'POST' }));
}

async function startGuestSession(): Promise<Session> {
  const stored = readStored();
  if (!stored) return store(await requestJson<GuestSessionDto>('/api/auth/guest', { method: 'POST' }));
  try {
    return await renewGuestSession(stored);
  } catch {
    return stored;
  }
}

/** The session being started, shared by every caller until it settles. */
let starting: Promise<Session> | null = null;

/**
 * The guest session of this browser: the stored token is refreshed so a returning guest keeps their threads; a
 * refused one is replaced by a new guest. Offline, the stored token is kept.
 *
 * Calls made while one is under way share it: on a first visit two calls (React's StrictMode runs a mount effect
 * twice) would otherwise sign in two guests, and the page would create its first thread as one and join it over a
 * socket authenticated as the other ("No such thread.", the message stuck at "sending…").
 */
export function ensureGuestSession(): Promise<Session> {
  starting ??= startGuestSession().finally(() => {
    starting = null;
  });
  return starting;
}

/** Longest delay setTimeout takes (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * How long to wait before renewing a token: at four fifths of its remaining life (a minute early at most), so REST
 * calls never carry an expired token. Null expiry: now.
 */
export function renewDelayMs(session: Session, now = Date.now()): number {
  if (!session.expiresAt) return 0;
  const remaining = new Date(session.expiresAt).getTime() - now;
  return Math.min(MAX_TIMER_MS, Math.max(0, Math.max(remaining - 60_000, Math.floor(remaining * 0.8))));
}
