export { createLocalEventBus } from './local-event-bus';
export { createSocketServer, type SocketServer, type SocketServerOptions } from './create-socket-server';
export type { SocketDeps } from './socket-deps';
export { forwardThreadEvents, type RoomEmitter } from './forward-thread-events';
export { createRedisRoomEmitter, socketChannelKey } from './redis-socket-adapter';
export { maxHttpBufferSize } from './max-http-buffer-size';
export { roomOf } from './socket-types';
