import type { ErrorBody } from './errors';

/**
 * DTOs of the REST API and the socket protocol, shared with the browser.
 * Dates are ISO strings; Prisma rows and LangChain messages never appear here.
 */

export type RoleDto = 'system' | 'user' | 'assistant' | 'tool';
export type MessageStatusDto = 'pending' | 'streaming' | 'complete' | 'error' | 'cancelled';

/** POST /api/auth/guest and POST /api/auth/refresh: a guest's bearer token and when it expires. */
export interface GuestSessionDto {
  userId: string;
  token: string;
  /** ISO time after which the token is refused (refresh before; never past GUEST_MAX_AGE from the first token). */
  expiresAt: string;
}

export interface ToolCallDto {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export interface MessageDto {
  id: string;
  threadId: string;
  /** Gapless per thread; null while the message waits in the thread's queue. */
  seq: number | null;
  role: RoleDto;
  content: string;
  toolCalls: ToolCallDto[] | null;
  toolCallId: string | null;
  status: MessageStatusDto;
  error: ErrorBody | null;
  tokens: number;
  clientMessageId: string | null;
  turnId: string | null;
  toolRunId: string | null;
  pinned: boolean;
  superseded: boolean;
  deleted: boolean;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
}

export interface ContextSummaryDto {
  revision: number;
  tokens: number;
  coveredThroughSeq: number;
}

export interface ThreadDto {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  lastActivityAt: string;
  memoryMode: 'summary' | 'window-only';
  /** First seq the model sees (a "fresh context" moves it); the UI draws the divider before this message. */
  contextStartSeq: number;
  /** The thread's own memory policies; null fields use the deployment's. */
  settings: ThreadSettingsDto;
  /** True while the summary is withdrawn after a forget and rebuilt in the background. */
  memoryRebuilding: boolean;
  /**
   * A fork (a branch): the thread it was branched from (null once that thread is deleted) and the last message seq
   * it copied; messages through that seq are copies of the parent's. Null for a thread started afresh.
   */
  forkedFrom: ForkOriginDto | null;
}

export interface ForkOriginDto {
  threadId: string | null;
  seq: number;
}

/** Per-thread memory policy overrides, in the env's forms (`tokens=3000`, `messages=12`, ...). */
export interface ThreadSettingsDto {
  trigger: string | null;
  keep: string | null;
  /** Set by admins only. */
  summaryPrompt: string | null;
  /** Tokens of the thread's auto-recall slot (0: off); null: the deployment's RECALL_TOKENS. */
  recallTokens: number | null;
  /** Where auto-recall and search_transcript look: this chat, or all of the user's chats; null: RECALL_SCOPE. */
  recallScope: 'thread' | 'user' | null;
}

/** GET/PATCH /api/threads/:id/settings. */
export interface ThreadMemorySettingsDto {
  trigger: string | null;
  keep: string | null;
  memory: 'summary' | 'window-only';
  summaryPrompt: string | null;
  /** Tokens of the thread's auto-recall slot (0: off); null: the deployment's RECALL_TOKENS. */
  recallTokens: number | null;
  /** Where auto-recall and search_transcript look: this chat, or all of the user's chats; null: RECALL_SCOPE. */
  recallScope: 'thread' | 'user' | null;
  /** The deployment's policies, used where the thread has none. */
  defaults: { trigger: string; keep: string; recallTokens: number; recallScope: 'thread' | 'user' };
  pinnedTokens: number;
  pinnedMaxTokens: number;
  thread: ThreadDto;
}

/** POST/DELETE /api/threads/:id/messages/:messageId/pin. */
export interface PinResponseDto {
  /** Every message whose pin changed (a whole tool exchange for a message of one). */
  messages: MessageDto[];
  pinnedTokens: number;
  pinnedMaxTokens: number;
}

/** DELETE /api/threads/:id/messages/:messageId. */
export interface ForgetResponseDto {
  /** The tombstones: content erased, `deleted: true`. */
  messages: MessageDto[];
  /** The summary covered a forgotten message: it is withdrawn and being rebuilt. */
  memoryRebuilding: boolean;
  thread: ThreadDto;
  /** Copies of the forgotten messages that the user's other threads (forks, or the thread forked from) still hold. */
  copies: MessageCopyDto[];
}

/** POST/DELETE /api/threads/:id/context-reset. */
export interface ContextResetResponseDto {
  /** The thread's context start after the call: the model sees nothing before this seq. */
  seq: number;
  thread: ThreadDto;
}

/** POST /api/threads/:id/regenerate: the new turn, and the answers it replaced (kept, marked superseded). */
export type RegenerateResponseDto = SendMessageResponseDto & { superseded: MessageDto[] };

export interface ThreadDetailDto extends ThreadDto {
  messageCount: number;
  context: {
    summaryTokens: number;
    coveredThroughSeq: number;
    revision: number;
    windowEntries: number;
    windowTokens: number;
    foldPending: boolean;
    lastFoldAt: string | null;
    /** The last fold failed: a generic coded notice (the provider's or job's own text is for admins only). */
    lastFoldError: ErrorBody | null;
  };
}

export interface MessagePageDto {
  messages: MessageDto[];
  hasMoreBefore: boolean;
  hasMoreAfter: boolean;
}

export interface SendMessageResponseDto {
  userMessage: MessageDto;
  /** Assistant and tool messages of this turn. */
  messages: MessageDto[];
  turn: { id: string; status: 'queued' | 'running' | 'complete' | 'error' | 'cancelled'; error: ErrorBody | null };
}

export interface PackEntryDto {
  role: RoleDto;
  /** The entry's text; empty for the system prompt when `systemPrompt.hidden` (only admins get its text). */
  content: string;
  /**
   * Set on the entry that is the configured system prompt (SYSTEM_PROMPT), split from the summary it is sent with:
   * its sha256 `hash`, and `hidden` when the caller is not an admin (then `content` is empty).
   */
  systemPrompt?: { hash: string; hidden: boolean };
  toolCalls?: ToolCallDto[];
  toolCallId?: string;
  seq?: number;
  tokens: number;
}

/**
 * How the numbers relate (the memory panel's explanation): the model's window, less what is reserved for the answer,
 * is the budget; the offered tool definitions take their share of it first, and the pack's parts share the rest.
 */
export interface BudgetExplanationDto {
  /** The model's window (CONTEXT_MAX_INPUT_TOKENS, the model profile's, or the offline demo window). */
  contextWindow: number;
  /** RESERVED_OUTPUT_TOKENS: kept free for the answer. */
  reservedOutputTokens: number;
  /** contextWindow − reservedOutputTokens. */
  budget: number;
  /** The budget as our estimates count (lower when reported usage showed our estimates run low). */
  correctedBudget: number;
  /** The tool definitions the next call offers (sent with every call). */
  toolSchemas: number;
  /** The pack's parts (they add up to the pack's `tokens`). */
  parts: {
    systemPrefix: number;
    savedMemories: number;
    summary: number;
    pinned: number;
    window: number;
    recall: number;
    notes: number;
    priming: number;
  };
}

export interface ContextPackDto {
  messages: PackEntryDto[];
  tokens: number;
  /** What the pack may use: the corrected budget less the tool definitions (see `explanation`). */
  budget: number;
  explanation: BudgetExplanationDto;
  omitted: number;
  summary: { text: string; tokens: number; revision: number; coveredThroughSeq: number } | null;
  window: { fromSeq: number | null; throughSeq: number | null; entries: number; tokens: number };
  pinnedSeqs: number[];
  /** Older transcript messages the auto-recall slot shows (best matches of the latest user message). */
  recalledSeqs: number[];
  /** Messages of the user's other chats the auto-recall slot shows (the memory panel's "From other chats"). */
  recalledElsewhere: RecalledElsewhereDto[];
}

export interface ServerInfoDto {
  model: string;
  provider: 'openai-compatible' | 'anthropic' | 'offline';
  offline: boolean;
  budget: number;
  /** The model's window in tokens (CONTEXT_MAX_INPUT_TOKENS, the model profile's, or the offline demo window). */
  contextWindow: number;
  /** True when the offline model runs under its small demo window (no endpoint and no window configured). */
  demoWindow: boolean;
}

export type ToolRunStatusDto = 'queued' | 'running' | 'succeeded' | 'failed' | 'timed_out' | 'cancelled';

/** An async tool run; its id is the one public handle (given to the model, used in events and the cancel route). */
export interface ToolRunDto {
  id: string;
  threadId: string;
  toolCallId: string;
  name: string;
  args: Record<string, unknown>;
  status: ToolRunStatusDto;
  progress: number;
  progressNote: string | null;
  resultPreview: string | null;
  resultTokens: number | null;
  error: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

/** One model call of a thread (admin tokens chart): what the model was given against what the transcript holds. */
export interface ModelCallPointDto {
  id: string;
  at: string;
  purpose: 'chat' | 'summary' | 'condense' | 'auxiliary' | 'title';
  model: string;
  /** The answer the call produced (chat calls that finished): "What the model saw" opens on it. */
  messageId: string | null;
  /** Prompt tokens of the call: the provider's reported figure, else our estimate (see `promptTokensSource`). */
  promptTokens: number;
  /** `provider` when the provider reported usage; `estimate` when it did not and `promptTokens` is ours. */
  promptTokensSource: 'provider' | 'estimate';
  /** Our estimate (the context pack plus tool schemas for chat calls). */
  estimatedPromptTokens: number;
  /** Tokens of the whole transcript up to and including the last message stored before the call. */
  transcriptTokens: number;
  /** The highest transcript seq at the time of the call. */
  throughSeq: number;
  /** Prompt tokens the provider reported as read from its prompt cache; null when it did not report them. */
  reportedCachedTokens: number | null;
  /** Prompt tokens the provider reported as written to its prompt cache (Claude); null when it did not report them. */
  reportedCacheWriteTokens: number | null;
  /** Our estimate of the tool definitions' share of the prompt (chat calls); null where the call kept no parts. */
  toolSchemaTokens: number | null;
}

/** GET /api/admin/threads/:id/model-calls: the newest calls (oldest first within the page), and older ones by cursor. */
export interface ModelCallListDto {
  calls: ModelCallPointDto[];
  /** Pass as `before` for the page of older calls; null when these are the oldest. */
  nextCursor: string | null;
}

/** A summary revision in an export: a redacted one (it covered a deleted message) has no text. */
export interface ExportedRevisionDto {
  revision: number;
  author: 'fold' | 'overflow-fallback' | 'rebuild' | 'admin';
  fromSeq: number;
  throughSeq: number;
  tokens: number;
  model: string | null;
  redacted: boolean;
  text: string | null;
  createdAt: string;
}

/** GET /api/threads/:id/export?format=json: one object, each revision and each message on its own line. */
export interface ThreadExportDto {
  format: 'chat-thread-export';
  version: 1;
  exportedAt: string;
  thread: ThreadDto;
  summaryRevisions: ExportedRevisionDto[];
  messages: MessageDto[];
}

/** A transcript message the model was given for a reply (window or pinned), as it stands now. */
export interface SeenMessageDto {
  seq: number;
  role: RoleDto;
  place: 'window' | 'pinned' | 'recalled';
  /** null when the message is gone from the transcript (forgotten). */
  messageId: string | null;
  /** Forgotten since: the content is erased here as everywhere else. */
  forgotten: boolean;
  content: string | null;
}

/** A tool result as it entered the model's context (the condensed text when it was condensed). */
export interface SeenToolResultDto {
  seq: number;
  role: 'tool' | 'system';
  toolCallId: string | null;
  content: string | null;
  tokens: number;
  forgotten: boolean;
}

/** Estimated prompt tokens of each part of the call (they add up to `estimatedPromptTokens`). */
export interface SeenTokenPartsDto {
  systemPrefix: number;
  /** The user's saved memories (absent in calls recorded before them, or when there were none). */
  savedMemories?: number;
  summary: number;
  pinned: number;
  window: number;
  /** The auto-recall slot (absent in calls recorded before it existed). */
  recall?: number;
  notes: number;
  priming: number;
  toolSchemas: number;
}

/** `GET /api/threads/:id/messages/:messageId/context`: what the model was given for one reply. */
export interface MessageContextDto {
  messageId: string;
  model: string;
  at: string;
  /** Our estimate of the prompt (pack + tool schemas). */
  estimatedPromptTokens: number;
  /** The provider's figure, when it reported usage. */
  reportedPromptTokens: number | null;
  reportedCompletionTokens: number | null;
  /** Prompt tokens the provider reported as read from its prompt cache; null when it did not report them. */
  reportedCachedTokens: number | null;
  /** Prompt tokens the provider reported as written to its prompt cache (Claude); null when it did not report them. */
  reportedCacheWriteTokens: number | null;
  /**
   * Where this call's prompt first differed from the thread's previous call's, computed when the call was made: the
   * first differing pack message (-1: the tool schemas differed) and the estimated tokens before it (what a prompt
   * cache could reuse). Null when no previous call was known (the first call, another server process, older calls).
   */
  promptDivergence: { messageIndex: number; tokensBefore: number } | null;
  /** The call followed a context-overflow answer and a synchronous fold. */
  overflowRetry: boolean;
  /** Window entries the budget guard left out. */
  omitted: number;
  /**
   * The system prompt (SYSTEM_PROMPT) the call began with: its sha256 and token count for everyone, its `text` only
   * for admins (null for thread owners: operators keep confidential instructions there).
   */
  systemPrefix: { hash: string; text: string | null; tokens: number } | null;
  /** The summary revision the model got (its text is null once redacted by a forget). */
  summary: {
    revision: number;
    text: string | null;
    tokens: number;
    /** The first message the summary covers: the context's start when it was made (as the memory panel says). */
    fromSeq: number;
    throughSeq: number;
    redacted: boolean;
  } | null;
  windowSeqs: number[];
  pinnedSeqs: number[];
  /** Older transcript messages auto-recall put in the pack. */
  recalledSeqs: number[];
  /** Messages of the user's other chats auto-recall put in the pack (cross-thread recall). */
  recalledElsewhere: RecalledElsewhereDto[];
  /** The user's saved memories the pack carried, as they stand now (`text` null once deleted). */
  savedMemories: { id: string; text: string | null }[];
  messages: SeenMessageDto[];
  toolResults: SeenToolResultDto[];
  parts: SeenTokenPartsDto | null;
  /** The deployment's window, reserve for the answer and budget now, which the parts are read against. */
  limits: Pick<BudgetExplanationDto, 'contextWindow' | 'reservedOutputTokens' | 'budget'>;
}

/** A fork as its parent lists it (GET /api/threads/:id/forks). */
export interface ForkSummaryDto {
  threadId: string;
  title: string;
  /** The parent's last seq the fork copied: the web app lists the fork under that message. */
  seq: number;
  createdAt: string;
}

export interface ForkListDto {
  forks: ForkSummaryDto[];
}

/** POST /api/threads/:id/messages/:messageId/edit: the fork holding the edited message, and its turn's outcome. */
export type EditMessageResponseDto = SendMessageResponseDto & { thread: ThreadDto };

/** Another thread of the user that still holds a copy of a message (a fork and its parent share their history). */
export interface MessageCopyDto {
  threadId: string;
  title: string;
  messageId: string;
  seq: number;
}

/** One search hit: a message of one of the caller's threads, with a snippet whose matched words are marked. */
export interface SearchHitDto {
  threadId: string;
  threadTitle: string;
  messageId: string;
  seq: number;
  role: RoleDto;
  createdAt: string;
  /** Up to two fragments of the message around the matched words (joined by " … "). */
  snippet: string;
  /** [start, end) UTF-16 offsets into `snippet` of the matched words, ascending. */
  highlights: { start: number; end: number }[];
  /** A fork's copy of a message of the thread it was branched from (each thread lists its own once). */
  forkCopy: boolean;
}

/** GET /api/search and GET /api/threads/:id/search: a page of hits, best first. */
export interface SearchPageDto {
  hits: SearchHitDto[];
  /** Pass as `cursor` (with the same `q`) for the next page; null on the last page. */
  nextCursor: string | null;
}

/** One of the user's saved memories (issue 27): a short text the model gets in every thread of the user. */
export interface SavedMemoryDto {
  id: string;
  text: string;
  /** The message that asked the model to remember it; null for one added by hand (or once its chat is deleted). */
  source: { threadId: string; seq: number } | null;
  /** Whether the packs carry it: false for the older items left out over USER_MEMORY_TOKENS, and for proposals. */
  inContext: boolean;
  /**
   * `pending`: the model proposed it (SAVE_MEMORY_TOOL=confirm); it reaches no prompt until approved
   * (`POST /api/memory/:id/approve`), and Dismiss deletes it. `active`: in every pack within USER_MEMORY_TOKENS.
   */
  status: 'pending' | 'active';
  createdAt: string;
  updatedAt: string;
}

/** `GET /api/memory`: the user's saved memories, newest first. */
export interface SavedMemoryListDto {
  items: SavedMemoryDto[];
}

/** A message of another of the user's chats that auto-recall put in a pack; cited `[chat:<threadId>#<seq>]`. */
export interface RecalledElsewhereDto {
  threadId: string;
  seq: number;
  /** The chat's title now (null once it is deleted). */
  title: string | null;
}

/**
 * `GET /api/me/usage`: what the caller spent in the current period of their spend limit (a day when none applies),
 * what their calls in flight hold, and what is left. Money in the deployment's price currency, or tokens (`unit`).
 */
export interface SpendUsageDto {
  /** Whether spend limits are enforced on this server (SPEND_LIMITS); false: nothing is counted. */
  enforced: boolean;
  unit: 'money' | 'tokens';
  spent: number;
  /** The worst case of the sends and calls in flight (each settles to its real usage when it ends). */
  reserved: number;
  /** Null: no limit applies. */
  limit: number | null;
  remaining: number | null;
  period: 'day' | 'week' | 'month';
  /** The period's first day (YYYY-MM-DD in the server's spend time zone). */
  periodStart: string;
  /** When the period ends and spending starts again from 0 (ISO 8601). */
  resetsAt: string;
  /** What one more send holds while it runs (its worst case): a send is refused when `remaining` is below it. */
  perSend: number | null;
}
