import type { FacadeConversationStore } from '../../core/facade/facade-ports';

/** What the OpenAI-compatible routes (/v1) need besides the rest of the HTTP deps. */
export interface FacadeHttpDeps {
  conversations: FacadeConversationStore;
  /** OPENAI_FACADE_KEYS. */
  serviceKeys: string[];
  /** CHAT_MODEL, then FACADE_MODEL_ALIASES: what /v1/models lists and a request may name. */
  models: string[];
  /** FACADE_THREAD_HEADERS, lower case. */
  threadHeaders: string[];
  /** FACADE_MAX_BODY_BYTES. */
  maxBodyBytes: number;
  /** Names of our tools (a client tool may not take one). */
  serverToolNames: () => ReadonlySet<string>;
  /** True once the process is shutting down (503). */
  closing: () => boolean;
}
