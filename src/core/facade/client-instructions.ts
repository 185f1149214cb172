import type { Thread } from '../domain';

/** Longest client instructions (the system messages of an OpenAI client) a thread keeps. */
export const MAX_CLIENT_INSTRUCTIONS_CHARS = 32_000;

/** Between our system prefix and a client's instructions. */
export const CLIENT_INSTRUCTIONS_HEADING = '\n\nInstructions from the application this chat runs in:\n';

/**
 * The system prefix of the thread's packs: ours, then the client's instructions when an OpenAI client gave some
 * (its system message). The same text on every call while they stay the same, so a provider's prompt cache holds.
 */
export function systemPrefixFor(thread: Pick<Thread, 'settings'>, systemPrefix: string): string {
  const instructions = thread.settings.clientInstructions;
  return instructions ? `${systemPrefix}${CLIENT_INSTRUCTIONS_HEADING}${instructions}` : systemPrefix;
}
