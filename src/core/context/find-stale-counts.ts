import type { ContextEntry, EncodingName } from './types';

/**
 * Seqs of entries whose stored count was made with another encoding than the configured model's (or with an
 * unrecorded one): a background job recounts them, so counts of two encodings are never silently mixed.
 */
export function findStaleCounts(entries: readonly ContextEntry[], encoding: EncodingName): number[] {
  return entries.filter((entry) => entry.tokenEncoding !== encoding).map((entry) => entry.seq);
}
