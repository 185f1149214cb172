export { deleteThread } from './delete-thread';
export type { DeleteThreadDeps } from './delete-thread';
export { eraseUser, refusedAfterErasure } from './erase-user';
export type { EraseUserDeps } from './erase-user';
