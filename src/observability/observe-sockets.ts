import { randomUUID } from 'node:crypto';
import type { Server } from 'socket.io';
import { runWithLogContext } from './log-context';
import type { Metrics } from './metrics';

/**
 * Per socket event: a log context (socket, user, event and a fresh request id) around its handler, and the
 * RATE_LIMITED acks counted. Works as socket middleware, so the realtime handlers stay as they are.
 */
export function observeSocketServer(io: Pick<Server, 'on'>, metrics: Metrics): void {
  io.on('connection', (socket) => {
    socket.use((packet, next) => {
      const last = packet.length > 1 ? packet[packet.length - 1] : undefined;
      if (typeof last === 'function') {
        const ack = last as (response: unknown) => void;
        packet[packet.length - 1] = (response: unknown) => {
          if ((response as { error?: { code?: string } } | null)?.error?.code === 'RATE_LIMITED')
            metrics.rateLimited.inc({ transport: 'socket' });
          ack(response);
        };
      }
      const userId = (socket.data as { userId?: string }).userId;
      runWithLogContext(
        { requestId: randomUUID(), socketId: socket.id, event: String(packet[0]), ...(userId ? { userId } : {}) },
        next,
        { fresh: true },
      );
    });
  });
}
