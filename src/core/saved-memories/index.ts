export {
  addSavedMemory,
  approveSavedMemory,
  deleteSavedMemory,
  dismissSavedMemory,
  editSavedMemory,
  listSavedMemories,
  saveMemoryFromThread,
  savedMemoryTokens,
  validSavedMemoryText,
} from './manage-saved-memories';
export type { SavedMemoryDeps, SavedMemoryView } from './manage-saved-memories';
export { recountSavedMemoryTokens } from './recount-saved-memory-tokens';
export { SAVED_MEMORY_MAX_CHARS } from './saved-memory';
