export {
  createChatModels,
  modelAcceptsTemperature,
  DEFAULT_CHAT_MODEL,
  OPENAI_BASE_URL,
  PLACEHOLDER_API_KEY,
  type ChatModelLabel,
  type ChatModelProvider,
  type ChatModels,
  type ChatModelsConfig,
} from './create-chat-model.js';
export {
  OfflineChatModel,
  OFFLINE_MODEL_NAME,
  type OfflineChatModelMode,
  type OfflineChatModelOptions,
} from './offline-chat-model.js';
export { streamChat, type StreamChatOptions, type StreamChatResult } from './stream-chat.js';
export {
  classifyProviderError,
  parseRetryAfterMs,
  ModelCallError,
  type ProviderErrorClassification,
  type ProviderErrorKind,
} from './classify-provider-error.js';
export {
  toLangChainMessage,
  toLangChainMessages,
  fromAIMessageChunk,
  assembleToolCalls,
  type ChunkContent,
  type InvalidToolCall,
  type ModelUsage,
  type ToolCallDelta,
} from './to-langchain-messages.js';
export {
  countChatPromptTokens,
  countTextTokens,
  encodingForModel,
  type OpenAIToolDefinition,
} from './count-chat-tokens.js';
