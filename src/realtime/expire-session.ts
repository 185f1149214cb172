import type { LogPort } from '../core/ports';
import type { SessionExpiredPayload } from '../shared/socket-events';
import type { TypedSocket } from './socket-types';

/** Longest delay setTimeout takes (about 24.8 days); a longer wait is chained. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A socket lives no longer than its token: when `socket.data.expiresAt` passes, the socket gets `session-expired`
 * (coded UNAUTHORIZED) and is disconnected. An event arriving after expiry (a timer late under load) is not served.
 */
export function expireWithToken(socket: TypedSocket, log: Pick<LogPort, 'debug'>): void {
  let timer: NodeJS.Timeout | undefined;
  let expired = false;
  const expire = () => {
    if (expired) return;
    expired = true;
    clearTimeout(timer);
    const payload: SessionExpiredPayload = {
      error: { code: 'UNAUTHORIZED', message: 'Your session has expired: refresh the token and connect again.' },
      expiredAt: new Date(socket.data.expiresAt).toISOString(),
    };
    log.debug({ userId: socket.data.userId, socketId: socket.id }, 'socket token expired: disconnecting');
    socket.emit('session-expired', payload);
    socket.disconnect(true);
  };
  const arm = () => {
    const remaining = socket.data.expiresAt - Date.now();
    if (remaining <= 0) {
      expire();
      return;
    }
    timer = setTimeout(arm, Math.min(remaining, MAX_TIMER_MS));
    timer.unref();
  };
  socket.use((_packet, next) => {
    if (Date.now() >= socket.data.expiresAt) expire();
    else next();
  });
  socket.on('disconnect', () => clearTimeout(timer));
  arm();
}
