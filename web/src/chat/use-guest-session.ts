import { useCallback, useEffect, useRef, useState } from 'react';
import type { ServerInfoDto } from '../../../src/shared/api';
import { ApiError } from '../api/api-error';
import { ensureGuestSession, renewDelayMs, renewGuestSession, type Session } from '../api/guest-session';
import { requestJson } from '../api/request-json';

/**
 * Keeps the guest token fresh: renewed before it expires (REST calls never carry an expired token), and on demand
 * when the socket reports `session-expired`. Concurrent demands share one refresh.
 */
function useSessionRenewal(session: Session | null, setSession: (session: Session) => void): () => Promise<string> {
  const current = useRef(session);
  current.current = session;
  const pending = useRef<Promise<string> | null>(null);
  const renew = useCallback(() => {
    const from = current.current;
    if (!from) return Promise.reject(new Error('no session yet'));
    pending.current ??= renewGuestSession(from)
      .then((next) => {
        current.current = next;
        setSession(next);
        return next.token;
      })
      .finally(() => {
        pending.current = null;
      });
    return pending.current;
  }, [setSession]);
  useEffect(() => {
    if (!session) return undefined;
    let timer: number | undefined;
    // Offline or the server away: try again in a while (the refresh also takes a token that just expired).
    const attempt = (delayMs: number) => {
      timer = window.setTimeout(() => renew().catch(() => attempt(10_000)), delayMs);
    };
    attempt(renewDelayMs(session));
    return () => window.clearTimeout(timer);
  }, [session, renew]);
  return renew;
}

/** The guest session (signed in on the first visit, renewed before it expires) and the server's info. */
export function useGuestSession(onFatal: (message: string) => void) {
  const [session, setSession] = useState<Session | null>(null);
  const [info, setInfo] = useState<ServerInfoDto | null>(null);
  const renew = useSessionRenewal(session, setSession);
  useEffect(() => {
    ensureGuestSession().then(setSession, (error: unknown) => onFatal(ApiError.from(error).message));
    requestJson<ServerInfoDto>('/api/info').then(setInfo, () => setInfo(null));
  }, [onFatal]);
  return { session, info, renew };
}
