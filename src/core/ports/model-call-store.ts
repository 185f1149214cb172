import type { PackTokenParts, PackToolResult } from '../context/build-context-pack';

export interface ModelCallRecord {
  threadId: string | null;
  /** Whom the call was for; absent: the thread's owner (a call of no thread names its user). */
  userId?: string | null;
  messageId: string | null;
  /** `auxiliary`: a /v1 client's background request (a title, tags), of no thread; `title`: a chat's automatic title (core/titles). */
  purpose: 'chat' | 'summary' | 'condense' | 'auxiliary' | 'title';
  model: string;
  estimatedPromptTokens: number;
  reportedPromptTokens: number | null;
  reportedCompletionTokens: number | null;
  latencyMs: number | null;
  summaryRevision?: number | null;
  windowFromSeq?: number | null;
  windowThroughSeq?: number | null;
  pinnedSeqs?: number[];
  recalledSeqs?: number[];
  omitted?: number;
  overflowRetry?: boolean;
  error?: string | null;
  /** Prompt tokens the provider reported as read from its prompt cache; null when not reported. */
  reportedCachedTokens?: number | null;
  /** Prompt tokens the provider reported as written to its prompt cache (Anthropic); null when not reported. */
  reportedCacheWriteTokens?: number | null;
  /** Chat calls: where the prompt first differed from the thread's previous call's (null: no previous call known). */
  promptDivergence?: PromptDivergence | null;
  /** Chat calls: the prompt's fingerprints, so the thread's next call can compare with it from any process. */
  promptFingerprints?: PromptFingerprints | null;
}

/** A chat prompt's fingerprints (prompt-prefix-tracker.ts): its tool list's, and one per message. */
export interface PromptFingerprints {
  tools: number;
  messages: number[];
}

/** Where a chat call's prompt first differed from the previous call's in the same thread (what broke the cache). */
export interface PromptDivergence {
  /** Index of the first pack message that differs; -1 when the tool schemas (sent before the messages) differ; the pack's length when the previous prompt is a prefix of this one. */
  messageIndex: number;
  /** Estimated prompt tokens before it (tool schemas included), the most a provider's prompt cache could reuse. */
  tokensBefore: number;
}

/** What a chat call was given besides the summary revision and seq ranges of `ModelCallRecord`. */
export interface ChatCallManifest {
  /** The stable system prefix; the store keeps each distinct text once, by its hash. */
  systemPrefix: { text: string; tokens: number };
  windowSeqs: number[];
  /** Tool results as they entered the pack (condensed text included: a fold deletes the window entries). */
  toolResults: PackToolResult[];
  parts: PackTokenParts & { toolSchemas: number };
  /** The user's saved memories the pack carried. */
  savedMemoryIds?: string[];
  /** Messages of the user's other threads auto-recall put in the pack. */
  recalledElsewhere?: { threadId: string; seq: number }[];
  /** What the call recalled anew, held in place by later calls until the next fold (ContextPackManifest.recallNote). */
  recallNote?: {
    servedSeq: number;
    seqs: number[];
    elsewhere: { threadId: string; seq: number }[];
    tokens: number;
  } | null;
}

/** A chat call that produced an answer: stored with the answer, in the same statement (TurnStore.finishMessage). */
export interface ChatCallRecord extends ModelCallRecord {
  purpose: 'chat';
  manifest: ChatCallManifest;
}

export interface ModelCallStore {
  record(call: ModelCallRecord): Promise<void>;
}
