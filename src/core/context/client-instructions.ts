import type { OpenAIClientSettings } from './types';

/** What the helpers read of a thread: its settings' OpenAI client part. */
type ClientSettingsOf = { settings: { openaiClient?: OpenAIClientSettings } };

/** Longest client instructions (the system messages of an OpenAI client) a thread keeps: MAX_CLIENT_INSTRUCTIONS_CHARS' default. */
export const DEFAULT_MAX_CLIENT_INSTRUCTIONS_CHARS = 128_000;

/** Between our system prefix and a client's instructions. */
export const CLIENT_INSTRUCTIONS_HEADING = '\n\nInstructions from the application this chat runs in:\n';

/**
 * The system prefix of the thread's packs: ours, then the client's instructions when an OpenAI client gave some
 * (its system message). The same text on every call while they stay the same, so a provider's prompt cache holds.
 */
export function systemPrefixFor(thread: ClientSettingsOf, systemPrefix: string): string {
  const client = thread.settings.openaiClient;
  const instructions = [client?.instructions, client?.responseInstructions].filter(Boolean).join('\n\n');
  return instructions ? `${systemPrefix}${CLIENT_INSTRUCTIONS_HEADING}${instructions}` : systemPrefix;
}

/** The tools an OpenAI client offers in this thread (offered with ours; the client runs them). */
export function clientToolsOf(thread: ClientSettingsOf): OpenAIClientSettings['tools'] {
  return thread.settings.openaiClient?.tools ?? [];
}

/** True for a thread an OpenAI client drives: async server tools are not offered (it has no channel for a follow-up). */
export function drivenByOpenAIClient(thread: ClientSettingsOf): boolean {
  return thread.settings.openaiClient !== undefined;
}
