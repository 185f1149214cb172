/**
 * Domain types of the context engine. Pure data: no framework, database or model SDK types.
 * Every adapter (db, llm, http, realtime) maps to and from these.
 */

export type Role = 'system' | 'user' | 'assistant' | 'tool';

/** One tool call the assistant asked for. `args` is the parsed JSON object. */
export interface ToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/**
 * What the model may see for one transcript message (content possibly condensed).
 * `tokens` is counted once, when the entry is written, with `encoding`; packs sum it, never recount.
 * It is `TokenCounter.countMessage(entry)`: content, role, tool calls and the 3-token per-message overhead.
 */
export interface ContextEntry {
  seq: number;
  role: Role;
  content: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  tokens: number;
  /** The encoding `tokens` was counted with; entries counted with another one are recounted (findStaleCounts). */
  tokenEncoding?: EncodingName;
  pinned?: boolean;
}

export interface SummaryState {
  text: string;
  /** `TokenCounter.countText(text)`: the bare text, without message overhead. */
  tokens: number;
  /** Highest transcript seq folded into this summary. */
  coveredThroughSeq: number;
  revision: number;
  /** Where each segment of `text` ends (see core/summary/summary-segments); absent or empty: one segment. */
  segmentEnds?: readonly number[];
}

export type MemoryMode = 'summary' | 'window-only';

/** A transcript message older than the window that auto-recall found for the current turn. */
export interface RecalledMessage {
  seq: number;
  role: Role;
  content: string;
  createdAt: Date;
  /** Another thread of the same user the message is from (cross-thread recall, issue 27); absent: this thread. */
  thread?: { id: string; title: string };
  /** The ranking's score (higher is better), comparable between this thread's candidates and the others'. */
  score?: number;
}

/**
 * Sticky recall: what an earlier call of this summary revision recalled for one user message of the window (the
 * message it served). The pack shows it where it was first shown (next to that message) on every later call until
 * the next fold, so those calls find it in their cached prefix; new recalls add only what no note holds yet.
 */
export interface HeldRecallNote {
  /** The user message the note served (its seq in this thread). */
  servedSeq: number;
  /** The recalled messages, as they read now (forgotten ones and deleted chats' left out by the read). */
  recalled: RecalledMessage[];
}

/** One of the user's saved memories as the pack takes it (issue 27). */
export interface SavedMemoryItem {
  id: string;
  text: string;
  /** Tokens of its line (`savedMemoryLine`), counted when written. */
  tokens: number;
  createdAt: Date;
}

/**
 * A thread's context state. Invariant: every entry with seq >= contextStartSeq is exactly one of
 * covered by the summary, pinned, or in the window (in window-only mode: dropped instead of summarized).
 */
export interface ContextState {
  summary: SummaryState | null;
  /** Unfolded, unpinned entries, ascending seq. */
  window: ContextEntry[];
  /** Pinned entries (never folded), ascending seq. */
  pinned: ContextEntry[];
  /** Entries before this seq are neither summarized nor sent ("fresh context"). */
  contextStartSeq: number;
  memoryMode: MemoryMode;
  /** Auto-recall candidates, best first (older than the window); the pack takes what fits its recall slot. */
  recalled?: RecalledMessage[];
  /** Recall notes shown by earlier calls since the last fold (sticky recall), each next to the message it served. */
  heldRecall?: HeldRecallNote[];
  /**
   * Tokens of those notes as first shown: part of every pack until the next fold, so the fold trigger counts them
   * (read with every context read, also when the notes themselves are not).
   */
  heldRecallTokens?: number;
}

/** One message of a context pack, in the provider-neutral shape the llm adapter converts. */
export interface PackMessage {
  role: Role;
  content: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  /** Transcript seq the message renders, when it renders one entry. */
  seq?: number;
  /**
   * A recall note that later calls of this summary revision show in this very place (sticky recall): a held note, or
   * this call's slot when the manifest records it to be held. Like a message with a seq, it is part of the prompt the
   * next call repeats, so a provider cache breakpoint may end on it (anthropic-messages-request.ts).
   */
  held?: true;
  /**
   * Offsets into `content` where parts end that later calls repeat byte for byte until they change on their own
   * schedule (the leading message: the system prefix with the saved memories, then each summary segment, which a fold
   * appends after; what follows the last is the summary's coverage line, new at every fold). A provider whose cache
   * works on blocks may cut the text there (anthropic-messages-request.ts); the text is the same either way.
   */
  stableEnds?: number[];
  tokens: number;
}

/** Outcome of a validation: the caller branches on `ok` (like zod's `safeParse`). */
export type Result<T> = { ok: true; value: T } | { ok: false; error: string };

/** A tokenizer encoding the engine can count with. */
export type EncodingName = 'o200k_base' | 'cl100k_base';

/** A tool as OpenAI's Chat Completions API takes it. */
export interface OpenAIFunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** An OpenAI client's system message (placed after our system prefix) and its own tools (offered with ours). */
export interface OpenAIClientSettings {
  instructions: string | null;
  /**
   * A Responses API request's `instructions`: for the response it asks for only (each request sets or clears them),
   * after the client's instructions.
   */
  responseInstructions?: string | null;
  tools: OpenAIFunctionTool[];
}

/** The chat prompt a continued fold reuses as its prefix (summary/continued-fold-prompt.ts). */
export interface ChatPrefix {
  /** The pack a chat call of the thread would send now, without the per-call parts (no recall slot, no notes). */
  messages: PackMessage[];
  /** The tools offered with it (the same list, so the prefix matches from its first token). */
  tools: OpenAIFunctionTool[];
  /** The prefix's estimated prompt tokens, tool schemas included. */
  tokens: number;
}
