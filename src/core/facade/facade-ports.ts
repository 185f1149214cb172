import type { OpenAIClientSettings } from '../domain';

/** What the OpenAI-compatible route needs from the store besides the thread, turn and memory ports. */
export interface FacadeConversationStore {
  /** The threads a client's conversation key reached for this user (the first one and the forks made for it), newest first. */
  threadsOf(input: { userId: string; clientKey: string; limit: number }): Promise<string[]>;
  /** Records that the conversation key reached this thread (idempotent). */
  link(input: { userId: string; clientKey: string; threadId: string }): Promise<void>;
  /**
   * Sets what the OpenAI client sends with every request (`settings.openaiClient`: its system message and tools),
   * bumping the thread's version only when it changes.
   */
  setClientSettings(input: { threadId: string; settings: OpenAIClientSettings }): Promise<void>;
  /**
   * What the upstream model reported for the calls that produced the turn's messages, summed (tool rounds and an
   * overflow retry included); zeros when it reported nothing.
   */
  usageOfTurn(turnId: string): Promise<{ promptTokens: number; completionTokens: number; cachedTokens: number | null }>;
}
