import { useEffect, useState } from 'react';
import { io, type Socket } from 'socket.io-client';
import type { ClientToServerEvents, ServerToClientEvents } from '../../../src/shared/socket-events';

export type ChatSocket = Socket<ServerToClientEvents, ClientToServerEvents>;
export type ConnectionStatus = 'connecting' | 'connected' | 'reconnecting' | 'offline';

function disconnectedStatus(): ConnectionStatus {
  return navigator.onLine ? 'reconnecting' : 'offline';
}

/**
 * One socket.io connection per session (auth: the bearer token), reconnecting on its own.
 * Status: connected, reconnecting (server unreachable), offline (the browser has no network).
 */
export function useChatSocket(token: string | null): { socket: ChatSocket | null; status: ConnectionStatus; lastError: string | null } {
  const [socket, setSocket] = useState<ChatSocket | null>(null);
  const [status, setStatus] = useState<ConnectionStatus>('connecting');
  const [lastError, setLastError] = useState<string | null>(null);

  useEffect(() => {
    if (!token) return undefined;
    const created: ChatSocket = io({ auth: { token }, transports: ['websocket', 'polling'], reconnectionDelayMax: 3000 });
    setSocket(created);
    setStatus('connecting');
    const onConnect = () => {
      setStatus('connected');
      setLastError(null);
    };
    const onDisconnect = (reason: string) => {
      setStatus(disconnectedStatus());
      // socket.io does not reconnect after a server-side disconnect (e.g. a restart that closed sockets): do it.
      if (reason === 'io server disconnect') window.setTimeout(() => created.connect(), 500);
    };
    const onConnectError = (error: Error & { data?: { message?: string } }) => {
      setStatus(disconnectedStatus());
      setLastError(error.data?.message ?? error.message);
    };
    const onNetwork = () => {
      if (!created.connected) setStatus(disconnectedStatus());
      // Back online: try now instead of waiting for the next backoff step.
      if (navigator.onLine && !created.connected) created.connect();
    };
    created.on('connect', onConnect);
    created.on('disconnect', onDisconnect);
    created.on('connect_error', onConnectError);
    window.addEventListener('online', onNetwork);
    window.addEventListener('offline', onNetwork);
    return () => {
      window.removeEventListener('online', onNetwork);
      window.removeEventListener('offline', onNetwork);
      created.removeAllListeners();
      created.disconnect();
    };
  }, [token]);

  return { socket, status, lastError };
}
