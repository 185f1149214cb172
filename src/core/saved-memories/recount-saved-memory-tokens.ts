import type { SavedMemoryStore } from '../ports';
import { savedMemoryTokens, type SavedMemoryDeps } from './manage-saved-memories';

/** Items recounted per round trip. */
const BATCH = 500;

/**
 * Recounts the items counted for an earlier rendering of their line (the migration saved_memory_status marks them),
 * in batches, so the cap USER_MEMORY_TOKENS sums what the packs now show. Idempotent: every process may run it at
 * start; an item edited meanwhile keeps its edit's count. Returns how many were recounted.
 */
export async function recountSavedMemoryTokens(
  deps: { store: Pick<SavedMemoryStore, 'listStaleTokens' | 'saveRecount'> } & Pick<SavedMemoryDeps, 'counter'>,
  options: { maxBatches?: number } = {},
): Promise<number> {
  let recounted = 0;
  for (let batch = 0; batch < (options.maxBatches ?? 10_000); batch += 1) {
    const stale = await deps.store.listStaleTokens(BATCH);
    for (const item of stale) {
      await deps.store.saveRecount({ id: item.id, text: item.text, tokens: savedMemoryTokens(item.text, deps) });
    }
    recounted += stale.length;
    if (stale.length < BATCH) break;
  }
  return recounted;
}
