import type { ExtendedError } from 'socket.io';
import { isAppError } from '../core/errors/app-error';
import type { ConnectErrorData } from '../shared/socket-events';
import type { SocketDeps } from './socket-deps';
import type { TypedSocket } from './socket-types';
import { principalFromToken } from '../auth/principal-from-token';

function refused(data: ConnectErrorData): ExtendedError {
  const error: ExtendedError = new Error(data.message);
  error.data = data;
  return error;
}

/**
 * `io.use` middleware: the handshake's `auth.token` is the REST bearer JWT. A missing or bad token refuses the
 * connection; the client's `connect_error` carries `err.data = { code: 'UNAUTHORIZED', message }`.
 */
export function authenticateSocket(deps: Pick<SocketDeps, 'tokens' | 'threads' | 'log' | 'erasures' | 'claimGroups'>) {
  return (socket: TypedSocket, next: (error?: ExtendedError) => void): void => {
    const auth: unknown = socket.handshake.auth;
    const token =
      typeof auth === 'object' && auth !== null && typeof (auth as { token?: unknown }).token === 'string'
        ? (auth as { token: string }).token
        : null;
    principalFromToken(token, deps).then(
      (principal) => {
        socket.data.userId = principal.userId;
        socket.data.role = principal.role;
        socket.data.expiresAt = principal.expiresAt;
        next();
      },
      (error: unknown) => {
        if (isAppError(error) && error.code === 'UNAUTHORIZED')
          return next(refused({ code: 'UNAUTHORIZED', message: error.message }));
        deps.log.error({ err: error }, 'socket authentication failed');
        // Not the client's fault (e.g. the database is down), but the connection cannot be served either.
        next(refused({ code: 'UNAVAILABLE', message: 'The server cannot accept connections right now.' }));
      },
    );
  };
}
