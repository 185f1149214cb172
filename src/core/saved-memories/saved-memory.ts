/** Longest text a saved memory may have (characters). */
export const SAVED_MEMORY_MAX_CHARS = 1000;
