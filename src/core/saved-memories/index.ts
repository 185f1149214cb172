export {
  addSavedMemory,
  deleteSavedMemory,
  editSavedMemory,
  listSavedMemories,
  saveMemoryFromThread,
  validSavedMemoryText,
} from './manage-saved-memories';
export type { SavedMemoryDeps, SavedMemoryView } from './manage-saved-memories';
export { SAVED_MEMORY_MAX_CHARS } from './saved-memory';
export type { SavedMemory, SavedMemorySource } from './saved-memory';
