import { io as connect, type Socket } from 'socket.io-client';
import type { AckResponse, ClientToServerEvents, ServerToClientEvents } from '../../src/shared/socket-events';
import type { TestApp } from './test-app';

export type ClientSocket = Socket<ServerToClientEvents, ClientToServerEvents>;

export interface RecordedEvent {
  type: string;
  payload: Record<string, unknown>;
}

export interface Tab {
  socket: ClientSocket;
  /** Every server event this tab received, in order. */
  events: RecordedEvent[];
  /** Emits a client event and resolves with its ack; `ackIndex` is how many events had arrived before it. */
  request<R extends object>(event: string, payload: unknown): Promise<{ response: AckResponse<R>; ackIndex: number }>;
  close(): void;
}

/**
 * A browser tab: a real socket.io-client, connected and authenticated, recording every event. Over WebSocket by
 * default; `transports: ['polling']` stays on HTTP long-polling, `['polling', 'websocket']` starts there and upgrades.
 */
export async function openTab(
  app: Pick<TestApp, 'baseUrl'>,
  token: string,
  options: { transports?: Array<'websocket' | 'polling'> } = {},
): Promise<Tab> {
  const socket: ClientSocket = connect(app.baseUrl, {
    auth: { token },
    transports: options.transports ?? ['websocket'],
    reconnection: false,
    forceNew: true,
  });
  const events: RecordedEvent[] = [];
  socket.onAny((type: string, payload: Record<string, unknown>) => events.push({ type, payload }));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
  return {
    socket,
    events,
    request<R extends object>(event: string, payload: unknown) {
      return new Promise<{ response: AckResponse<R>; ackIndex: number }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ack for ${event} within 15 s`)), 15_000);
        (socket.emit as (event: string, ...args: unknown[]) => void)(event, payload, (response: AckResponse<R>) => {
          clearTimeout(timer);
          // Read synchronously in the ack callback: events after this index arrived after the ack.
          resolve({ response, ackIndex: events.length });
        });
      });
    },
    close: () => socket.disconnect(),
  };
}

/** A refused connection's `connect_error`. */
export function connectError(
  app: Pick<TestApp, 'baseUrl'>,
  auth: Record<string, unknown>,
): Promise<Error & { data?: { code: string; message: string } }> {
  const socket: ClientSocket = connect(app.baseUrl, {
    auth,
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
  });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => {
      socket.disconnect();
      reject(new Error('the connection was accepted'));
    });
    socket.once('connect_error', (error) => {
      socket.disconnect();
      resolve(error as Error & { data?: { code: string; message: string } });
    });
  });
}

/** The events of one type, with their payloads typed loosely. */
export function eventsOf(tab: Pick<Tab, 'events'>, type: string, from = 0): Array<Record<string, unknown>> {
  return tab.events
    .slice(from)
    .filter((event) => event.type === type)
    .map((event) => event.payload);
}
