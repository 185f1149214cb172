export { editMessage } from './edit-message';
export type { EditOutcome } from './edit-message';
export type { EditDeps, ForkDeps, ForkGuards } from './fork-deps';
export { forkPointOf } from './fork-point';
export { FORK_BUSY, forkThread, forkTitle } from './fork-thread';
