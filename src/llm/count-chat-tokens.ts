/**
 * Token counting the way OpenAI bills chat prompts, for the HTTP stub and the offline model.
 * The context engine has its own counter (src/core/context); this one only needs to agree with
 * OpenAI's reported `prompt_tokens`, so the stub can play the provider in tests. Both use the process's one
 * encoder per encoding (core's `encoderFor`): building one parses its ranks, which costs seconds on a busy machine.
 */
import { boundedEncodedLength, tokenizerWork } from '../core/context';

export type TokenEncodingName = 'o200k_base' | 'cl100k_base';

/** One chat message in OpenAI's wire format, as far as counting needs it. */
export interface WireChatMessage {
  role: string;
  content?: string | Array<{ type: string; text?: string }> | null;
  name?: string;
  tool_calls?: Array<{ id?: string; type?: string; function?: { name?: string; arguments?: string } }>;
  tool_call_id?: string;
}

/** One tool in OpenAI's function format. */
export interface OpenAIToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** OpenAI's per-message overhead (`<|start|>role ... <|end|>`) and the reply priming. */
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_NAME = 1;
const REPLY_PRIMING_TOKENS = 3;
/** Approximations for tool calls and schemas (OpenAI cookbook, gpt-4o family). */
const TOKENS_PER_TOOL_CALL = 3;
const FUNCTION_INIT = 7;
const PROPERTIES_INIT = 3;
const PROPERTY_KEY = 3;
const ENUM_INIT = -3;
const ENUM_ITEM = 3;
const FUNCTIONS_END = 12;

/** The encoding OpenAI uses for a model name; `o200k_base` for unknown names. */
export function encodingForModel(model: string): TokenEncodingName {
  const name = model.split('/').pop()?.toLowerCase() ?? '';
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|chatgpt-4o|o\d)/.test(name)) return 'o200k_base';
  if (/^(gpt-4|gpt-3\.5|gpt-35|text-embedding-3|text-embedding-ada)/.test(name)) return 'cl100k_base';
  return 'o200k_base';
}

/** Tokens of a plain text with the given encoding (default `o200k_base`). */
export function countTextTokens(text: string, encoding: TokenEncodingName = 'o200k_base'): number {
  tokenizerWork.calls += 1;
  if (text.length === 0) return 0;
  // Special-token text ("<|endoftext|>") counts as plain text, as it does in the API.
  return boundedEncodedLength(encoding, text);
}

/** The text of a message's content, whether a string or an array of text parts. */
export function wireContentText(content: WireChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('');
}

function countMessageTokens(message: WireChatMessage, encoding: TokenEncodingName): number {
  let tokens = TOKENS_PER_MESSAGE + countTextTokens(message.role, encoding);
  tokens += countTextTokens(wireContentText(message.content), encoding);
  if (message.name) tokens += TOKENS_PER_NAME + countTextTokens(message.name, encoding);
  for (const call of message.tool_calls ?? []) {
    tokens += TOKENS_PER_TOOL_CALL;
    tokens += countTextTokens(call.function?.name ?? '', encoding);
    tokens += countTextTokens(call.function?.arguments ?? '', encoding);
  }
  return tokens;
}

function countToolDefinitionTokens(tools: OpenAIToolDefinition[], encoding: TokenEncodingName): number {
  if (tools.length === 0) return 0;
  let tokens = 0;
  for (const tool of tools) {
    const { name, description = '', parameters } = tool.function;
    tokens += FUNCTION_INIT + countTextTokens(`${name}:${description.replace(/\.$/, '')}`, encoding);
    const properties = (parameters?.properties ?? {}) as Record<
      string,
      { type?: unknown; description?: string; enum?: unknown[] }
    >;
    const keys = Object.keys(properties);
    if (keys.length > 0) tokens += PROPERTIES_INIT;
    for (const key of keys) {
      const property = properties[key] ?? {};
      const description = (property.description ?? '').replace(/\.$/, '');
      tokens += PROPERTY_KEY + countTextTokens(`${key}:${String(property.type ?? 'object')}:${description}`, encoding);
      if (Array.isArray(property.enum)) {
        tokens += ENUM_INIT;
        for (const item of property.enum) tokens += ENUM_ITEM + countTextTokens(String(item), encoding);
      }
    }
  }
  return tokens + FUNCTIONS_END;
}

/**
 * Prompt tokens of a chat request as OpenAI counts them: 3 per message plus its role and
 * content (and name), 3 for the reply priming; tool calls and tool schemas are approximated.
 */
export function countChatPromptTokens(options: {
  model: string;
  messages: WireChatMessage[];
  tools?: OpenAIToolDefinition[];
}): number {
  const encoding = encodingForModel(options.model);
  let tokens = REPLY_PRIMING_TOKENS;
  for (const message of options.messages) tokens += countMessageTokens(message, encoding);
  return tokens + countToolDefinitionTokens(options.tools ?? [], encoding);
}
