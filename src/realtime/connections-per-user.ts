import type { ExtendedError } from 'socket.io';
import type { ConnectErrorData } from '../shared/socket-events';
import type { TypedSocket } from './socket-types';

/** How long a socket that passed the middleware may take to connect before its slot is given back. */
const CONNECT_GRACE_MS = 10_000;

/**
 * `io.use` middleware after authentication: at most `max` open sockets per user in this process (MAX_SOCKETS_PER_USER).
 * The slot is taken when the middleware admits the socket (so concurrent handshakes cannot overshoot) and given
 * back on disconnect. Refused: `connect_error` with `{ code: 'RATE_LIMITED' }`. Per process by design: a user's
 * sockets spread over N processes may hold N × max, which still bounds what one user can open.
 */
export function connectionsPerUser(max: number) {
  const open = new Map<string, Set<string>>();
  const release = (userId: string, socketId: string) => {
    const sockets = open.get(userId);
    sockets?.delete(socketId);
    if (sockets?.size === 0) open.delete(userId);
  };
  return (socket: TypedSocket, next: (error?: ExtendedError) => void): void => {
    const { userId } = socket.data;
    const sockets = open.get(userId) ?? new Set<string>();
    if (sockets.size >= max) {
      const error: ExtendedError = new Error('Too many open connections');
      const data: ConnectErrorData = {
        code: 'RATE_LIMITED',
        message: `This user already has ${sockets.size} open connections (the most is ${max}); close a tab or window and reconnect.`,
      };
      error.data = data;
      next(error);
      return;
    }
    sockets.add(socket.id);
    open.set(userId, sockets);
    socket.once('disconnect', () => release(userId, socket.id));
    setTimeout(() => {
      if (!socket.connected) release(userId, socket.id);
    }, CONNECT_GRACE_MS).unref();
    next();
  };
}
