import { ApiError } from './api-error';
import { requestJson } from './request-json';

export interface Session {
  userId: string;
  token: string;
}

const STORAGE_KEY = 'split-context-chat.session';

function readStored(): Session | null {
  try {
    const value = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null') as Partial<Session> | null;
    return value && typeof value.token === 'string' && typeof value.userId === 'string' ? { userId: value.userId, token: value.token } : null;
  } catch {
    return null;
  }
}

function store(session: Session): Session {
  localStorage.setItem(STORAGE_KEY, JSON.stringify(session));
  return session;
}

/**
 * The guest session of this browser: the stored token is refreshed (POST /api/auth/refresh) so a returning
 * guest keeps their threads; a rejected token is replaced by a new guest. Offline, the stored token is kept.
 */
export async function ensureGuestSession(): Promise<Session> {
  const stored = readStored();
  if (stored) {
    try {
      return store(await requestJson<Session>('/api/auth/refresh', { method: 'POST', token: stored.token }));
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'UNAUTHORIZED') return stored;
    }
  }
  return store(await requestJson<Session>('/api/auth/guest', { method: 'POST' }));
}
