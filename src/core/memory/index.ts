export { exchangeSeqsOf } from './exchange-seqs-of';
export { exportThread } from './export-thread';
export type { ExportFormat } from './export-thread';
export { forgetMessage } from './forget-message';
export type { ForgetOutcome } from './forget-message';
export type { MemoryActor, MemoryDeps } from './memory-deps';
export { pinMessage, unpinMessage } from './pin-message';
export type { PinOutcome } from './pin-message';
export { regenerateAnswer } from './regenerate-answer';
export type { RegenerateOutcome } from './regenerate-answer';
export { requestRebuild } from './request-rebuild';
export { resetContext, undoContextReset } from './reset-context';
export type { ContextResetOutcome } from './reset-context';
export { threadForActor } from './thread-for-actor';
export {
  getThreadSettings,
  MAX_SUMMARY_PROMPT_CHARS,
  threadSettingsView,
  updateThreadSettings,
} from './update-thread-settings';
export type { ThreadSettingsPatch, ThreadSettingsView } from './update-thread-settings';
