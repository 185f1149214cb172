import { foldThread } from '../core/summary/fold-thread';
import { createFacadeConversationRepository } from '../db/facade-conversation-repository';
import type { FacadeHttpDeps } from '../http/openai-facade/facade-deps';
import { compactionKey } from '../http/openai-responses/compaction-token';
import { responseIdKey } from '../http/openai-responses/response-ids';
import type { Wiring } from './application';
import type { Limits } from './wire-limits';
import type { Models } from './wire-models';
import type { Queues } from './wire-queues';
import type { Observed, Stores } from './wire-stores';
import type { Tools } from './wire-tools';

/** The OpenAI-compatible routes (/v1): their conversations, keys, bounds, and the chat they share with the app. */
export function facadeDeps(
  { options, env }: Wiring,
  parts: { stores: Stores; observed: Observed; models: Models; queues: Queues; tools: Tools; limits: Limits },
): FacadeHttpDeps {
  const { registry } = parts.tools;
  return {
    conversations: createFacadeConversationRepository(parts.stores.db),
    serviceKeys: env.OPENAI_FACADE_KEYS,
    models: [env.CHAT_MODEL, ...env.FACADE_MODEL_ALIASES.filter((name) => name !== env.CHAT_MODEL)],
    threadHeaders: env.FACADE_THREAD_HEADERS,
    maxBodyBytes: env.FACADE_MAX_BODY_BYTES,
    maxReadMessages: env.FACADE_MAX_READ_MESSAGES,
    maxClientInstructionsChars: env.MAX_CLIENT_INSTRUCTIONS_CHARS,
    maxToolDescriptionChars: env.MAX_CLIENT_TOOL_DESCRIPTION_CHARS,
    maxBackgroundResponses: env.BACKGROUND_RESPONSES_PER_USER,
    responseIdKey: responseIdKey(options.authSecret),
    compactionKey: compactionKey(options.authSecret),
    fold: (threadId, { force, signal }) => foldThread({ threadId, force, signal }, parts.queues.foldDeps),
    toolRoundLimiter: parts.limits.toolRoundLimiter,
    auxiliaryPrefixes: env.FACADE_AUXILIARY_PREFIXES,
    chat: parts.models.chat,
    calls: parts.stores.calls,
    serverToolNames: () => new Set(registry.list().map((tool) => tool.name)),
    clientThreadTools: () =>
      registry.definitions().filter((definition) => registry.get(definition.function.name)?.mode !== 'async'),
    closing: () => parts.observed.lifecycle.closing,
  };
}
