import type { ClientHistoryStore } from './client-history-store';
import type { OpenAIClientSettings, ToolCall } from '../context/types';
import type { TranscriptMessage } from '../domain/types';

/** One thread a conversation key reached. */
export interface ConversationBranch {
  threadId: string;
  /** The last characters (up to BRANCH_TAIL_CHARS) of its last user or assistant text; null when it has none. */
  lastTextTail: string | null;
}

/** How much of a branch's last text the store returns as its hint. */
export const BRANCH_TAIL_CHARS = 256;

/** A message a client appends to a conversation without a turn (POST /v1/conversations/{id}/items). */
export type AppendedMessage = { content: string; tokens: number; encoding: string } & (
  { role: 'user' } | { role: 'assistant'; toolCalls: ToolCall[] } | { role: 'tool'; toolCallId: string }
);

/** What the OpenAI-compatible route needs from the store besides the thread, turn and memory ports. */
export interface FacadeConversationStore {
  /**
   * The threads a client's conversation key reached for this user (the first one and the forks made for it), the most
   * recently active first, each with the end of the last text a client saw in it (a hint of the branch a history goes on).
   */
  threadsOf(input: { userId: string; clientKey: string; limit: number }): Promise<ConversationBranch[]>;
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
  usageOfTurn(turnId: string): Promise<{
    promptTokens: number;
    completionTokens: number;
    cachedTokens: number | null;
    /** Prompt tokens written to the provider's cache (Anthropic); null when no call reported any. */
    cacheWriteTokens: number | null;
  }>;
  /**
   * Marks the turn to be cancelled when it starts, if it is still queued (its client went away): it then starts only
   * to end as cancelled, its user message taking its seq, without calling the model. False when it is not queued.
   */
  cancelQueuedTurn(turnId: string): Promise<boolean>;
  /**
   * Appends messages to the owner's thread without running a turn, in one transaction: each takes the thread's next
   * seq, complete (no turn), and joins the window with its context entry; a fresh context pending undo becomes final,
   * as a sent message makes it. Nothing is written when the thread is not `ownerId`'s (`missing`) or while one of its
   * turns is queued or running (`busy`: the messages would land inside an answer being written).
   */
  appendMessages(input: {
    threadId: string;
    ownerId: string;
    messages: readonly AppendedMessage[];
  }): Promise<{ appended: TranscriptMessage[] } | { refused: 'missing' | 'busy' }>;
  /** Replaces a conversation's metadata (ThreadSettings.conversationMetadata); the thread's version stays. */
  setConversationMetadata(input: { threadId: string; metadata: Record<string, string> }): Promise<void>;
  /** How many turns of the user's threads are queued or running (their answers in flight). */
  activeTurns(userId: string): Promise<number>;
  /** The history matching's reads (see ClientHistoryStore). */
  history: ClientHistoryStore;
}
