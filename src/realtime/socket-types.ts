import type { Server, Socket } from 'socket.io';
import type { ClientToServerEvents, ServerToClientEvents, SocketData } from '../shared/socket-events';

/** Events between server processes (through the Redis adapter). None yet. */
export type InterServerEvents = Record<string, never>;

export type TypedServer = Server<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>;
export type TypedSocket = Socket<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>;

/** The room of a thread: every tab of its owner that joined it. */
export function roomOf(threadId: string): string {
  return `thread:${threadId}`;
}
