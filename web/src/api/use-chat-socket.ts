import { useEffect, useRef, useState, type MutableRefObject } from 'react';
import { io, type Socket } from 'socket.io-client';
import type { ClientToServerEvents, ServerToClientEvents } from '../../../src/shared/socket-events';

export type ChatSocket = Socket<ServerToClientEvents, ClientToServerEvents>;
export type ConnectionStatus = 'connecting' | 'connected' | 'reconnecting' | 'offline';

function disconnectedStatus(): ConnectionStatus {
  return navigator.onLine ? 'reconnecting' : 'offline';
}

export interface ChatSocketOptions {
  /** The session's user: one socket per user, kept across token refreshes. */
  userId: string | null;
  /** The current bearer token, read at every (re)connect. */
  token: string | null;
  /** Renews the session's token (after `session-expired`, or a refused reconnect); resolves with the new token. */
  renew(): Promise<string>;
}

/** What the connection's listeners change: the status shown, the last error, the token read at each connect. */
interface ConnectionControls {
  setStatus(status: ConnectionStatus): void;
  setLastError(error: string | null): void;
  tokenRef: MutableRefObject<string | null>;
  renewRef: MutableRefObject<() => Promise<string>>;
}

/**
 * Listens to one socket's connection events and the browser's network state; returns the function that stops
 * (listeners removed, the socket disconnected).
 */
function watchConnection(created: ChatSocket, controls: ConnectionControls): () => void {
  const { setStatus, setLastError, tokenRef, renewRef } = controls;
  let renewing = false;
  let stopped = false;
  const renewAndConnect = () => {
    if (renewing) return;
    renewing = true;
    setStatus(disconnectedStatus());
    renewRef
      .current()
      .then(
        (token) => {
          tokenRef.current = token;
        },
        // eslint-disable-next-line no-restricted-syntax -- offline or the server is down: connecting again retries with the token we have
        () => {},
      )
      .finally(() => {
        renewing = false;
        if (!stopped && !created.connected) created.connect();
      });
  };
  const onConnect = () => {
    setStatus('connected');
    setLastError(null);
  };
  const onDisconnect = (reason: string) => {
    setStatus(disconnectedStatus());
    // socket.io does not reconnect after a server-side disconnect (e.g. a restart that closed sockets): do it,
    // unless an expired session is being renewed (that reconnects once the token is fresh).
    if (reason === 'io server disconnect')
      window.setTimeout(() => {
        if (!renewing && !stopped) created.connect();
      }, 500);
  };
  const onConnectError = (error: Error & { data?: { code?: string; message?: string } }) => {
    setStatus(disconnectedStatus());
    setLastError(error.data?.message ?? error.message);
    // A refused token (expired while the tab slept): socket.io does not retry a middleware refusal on its own.
    if (error.data?.code === 'UNAUTHORIZED') renewAndConnect();
    // Too many open tabs of this user (MAX_SOCKETS_PER_USER): the message says so; try again once one may have closed.
    if (error.data?.code === 'RATE_LIMITED')
      window.setTimeout(() => {
        if (!stopped && !created.connected) created.connect();
      }, 30_000);
  };
  const onNetwork = () => {
    if (!created.connected) setStatus(disconnectedStatus());
    // Back online: try now instead of waiting for the next backoff step.
    if (navigator.onLine && !created.connected) created.connect();
  };
  created.on('connect', onConnect);
  created.on('disconnect', onDisconnect);
  created.on('connect_error', onConnectError);
  created.on('session-expired', renewAndConnect);
  window.addEventListener('online', onNetwork);
  window.addEventListener('offline', onNetwork);
  return () => {
    stopped = true;
    window.removeEventListener('online', onNetwork);
    window.removeEventListener('offline', onNetwork);
    created.removeAllListeners();
    created.disconnect();
  };
}

/**
 * One socket.io connection per session (auth: the current bearer token), reconnecting on its own. When the server
 * says the token expired (`session-expired`, then a disconnect) or refuses a reconnect as UNAUTHORIZED, the token is
 * renewed and the same socket connects again: the thread re-joins with catch-up, the outbox and the composer stay.
 * Status: connected, reconnecting (server unreachable), offline (the browser has no network).
 */
export function useChatSocket(options: ChatSocketOptions): {
  socket: ChatSocket | null;
  status: ConnectionStatus;
  lastError: string | null;
} {
  const { userId } = options;
  const [socket, setSocket] = useState<ChatSocket | null>(null);
  const [status, setStatus] = useState<ConnectionStatus>('connecting');
  const [lastError, setLastError] = useState<string | null>(null);
  const tokenRef = useRef(options.token);
  tokenRef.current = options.token;
  const renewRef = useRef(options.renew);
  renewRef.current = options.renew;

  useEffect(() => {
    if (!userId) return undefined;
    const created: ChatSocket = io({
      auth: (send) => send({ token: tokenRef.current }),
      transports: ['websocket', 'polling'],
      reconnectionDelayMax: 3000,
    });
    setSocket(created);
    setStatus('connecting');
    return watchConnection(created, { setStatus, setLastError, tokenRef, renewRef });
  }, [userId]);

  return { socket, status, lastError };
}
