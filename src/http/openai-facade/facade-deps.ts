import type { FacadeConversationStore } from '../../core/ports';
import type { RateLimiter } from '../../core/limits/rate-limiter';
import type { OpenAIFunctionTool } from '../../core/context/types';
import type { ChatModelPort, ModelCallStore } from '../../core/ports';
import type { FoldOutcome } from '../../core/summary/fold-thread';

/** What the OpenAI-compatible routes (/v1) need besides the rest of the HTTP deps. */
export interface FacadeHttpDeps {
  conversations: FacadeConversationStore;
  /** OPENAI_FACADE_KEYS. */
  serviceKeys: string[];
  /** CHAT_MODEL, then FACADE_MODEL_ALIASES: what /v1/models lists and a request may name. */
  models: string[];
  /** FACADE_THREAD_HEADERS, lower case. */
  threadHeaders: string[];
  /** FACADE_AUXILIARY_PREFIXES: a request of one user message beginning so is answered statelessly. */
  auxiliaryPrefixes: string[];
  /** The chat model, for those stateless answers (turns go through the runner). */
  chat: ChatModelPort;
  /** Where those answers' model calls are recorded (the admin's costs). */
  calls: ModelCallStore;
  /** FACADE_MAX_BODY_BYTES. */
  maxBodyBytes: number;
  /** FACADE_MAX_READ_MESSAGES: messages one request reads at most to match its history. */
  maxReadMessages: number;
  /** MAX_CLIENT_INSTRUCTIONS_CHARS: longest system and developer texts of a request, joined. */
  maxClientInstructionsChars: number;
  /** MAX_CLIENT_TOOL_DESCRIPTION_CHARS: longest description of one client tool. */
  maxToolDescriptionChars: number;
  /** BACKGROUND_RESPONSES_PER_USER: a background response is refused while the user has this many answers in flight. */
  maxBackgroundResponses: number;
  /** TOOL_ROUNDS_PER_MINUTE: what a request only bringing client tools' results spends instead of the send limit. */
  toolRoundLimiter: RateLimiter;
  /** Signs the ids of /v1/responses answers (derived from AUTH_SECRET: responseIdKey). */
  responseIdKey: Buffer;
  /** Signs the tokens of compaction items (derived from AUTH_SECRET under its own label: compactionKey). */
  compactionKey: Buffer;
  /**
   * A fold of a thread now, through the normal fold path (foldThread; `force`: whatever falls outside the keep policy,
   * else only when the trigger is reached), stopped by `signal`: what compaction runs.
   */
  fold: (threadId: string, options: { force: boolean; signal: AbortSignal }) => Promise<FoldOutcome>;
  /** Our tools a thread an OpenAI client drives is offered (async ones are not): what input_tokens counts. */
  clientThreadTools: () => OpenAIFunctionTool[];
  /** Names of our tools (a client tool may not take one). */
  serverToolNames: () => ReadonlySet<string>;
  /** True once the process is shutting down (503). */
  closing: () => boolean;
}
