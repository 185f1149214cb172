export { eraseUser, refusedAfterErasure } from './erase-user';
export type { EraseUserDeps, ErasureRecord, ErasureStore } from './erase-user';
