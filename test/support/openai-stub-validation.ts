/**
 * The request checks OpenAI's chat completions endpoint makes, with its error texts, so the stub
 * rejects what the real API rejects (tool-message ordering above all).
 */

/** The `error` object of OpenAI's error JSON. */
export interface OpenAIErrorBody {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

const VALID_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'];
const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

type UnknownRecord = Record<string, unknown>;

function isRecord(value: unknown): value is UnknownRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalidRequest(message: string, param: string | null, code: string | null): OpenAIErrorBody {
  return { message, type: 'invalid_request_error', param, code };
}

function missing(param: string): OpenAIErrorBody {
  return invalidRequest(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
}

function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a decimal';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

function validateContent(message: UnknownRecord, index: number): OpenAIErrorBody | null {
  const param = `messages[${index}].content`;
  const content = message.content;
  const hasToolCalls = Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
  if (content === undefined || content === null) {
    // Only an assistant message that calls tools may come without content.
    return message.role === 'assistant' && hasToolCalls ? null : missing(param);
  }
  if (typeof content === 'string') return null;
  if (Array.isArray(content) && content.every(isRecord)) return null;
  return invalidRequest(
    `Invalid type for '${param}': expected one of a string or array of objects, but got ${jsonTypeName(content)} instead.`,
    param,
    'invalid_type',
  );
}

function validateToolCalls(message: UnknownRecord, index: number): OpenAIErrorBody | null {
  if (message.tool_calls === undefined) return null;
  if (!Array.isArray(message.tool_calls)) {
    return invalidRequest(
      `Invalid type for 'messages[${index}].tool_calls': expected an array, but got ${jsonTypeName(message.tool_calls)} instead.`,
      `messages[${index}].tool_calls`,
      'invalid_type',
    );
  }
  for (const [callIndex, call] of message.tool_calls.entries()) {
    const prefix = `messages[${index}].tool_calls[${callIndex}]`;
    if (!isRecord(call) || typeof call.id !== 'string') return missing(`${prefix}.id`);
    if (!isRecord(call.function)) return missing(`${prefix}.function`);
    if (typeof call.function.name !== 'string') return missing(`${prefix}.function.name`);
    if (typeof call.function.arguments !== 'string') return missing(`${prefix}.function.arguments`);
  }
  return null;
}

function validateMessageShape(message: unknown, index: number): OpenAIErrorBody | null {
  if (!isRecord(message)) {
    return invalidRequest(
      `Invalid type for 'messages[${index}]': expected an object, but got ${jsonTypeName(message)} instead.`,
      `messages[${index}]`,
      'invalid_type',
    );
  }
  if (message.role === undefined) return missing(`messages[${index}].role`);
  if (typeof message.role !== 'string' || !VALID_ROLES.includes(message.role)) {
    return invalidRequest(
      `Invalid value: '${String(message.role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
      `messages[${index}].role`,
      'invalid_value',
    );
  }
  if (message.role === 'tool' && typeof message.tool_call_id !== 'string')
    return missing(`messages[${index}].tool_call_id`);
  return validateContent(message, index) ?? validateToolCalls(message, index);
}

function unansweredToolCalls(assistantIndex: number, pending: Set<string>): OpenAIErrorBody {
  return invalidRequest(
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
      `The following tool_call_ids did not have response messages: ${[...pending].join(', ')}`,
    `messages.[${assistantIndex}].role`,
    null,
  );
}

/**
 * OpenAI's ordering rule: the tool messages right after an assistant message with `tool_calls`
 * answer each of its ids; a tool message anywhere else, or answering another id, is rejected.
 */
function validateToolOrdering(messages: UnknownRecord[]): OpenAIErrorBody | null {
  let pending = new Set<string>();
  let answerable = new Set<string>();
  let assistantIndex = -1;
  for (const [index, message] of messages.entries()) {
    if (message.role === 'tool') {
      const id = message.tool_call_id as string;
      if (!answerable.has(id)) {
        return invalidRequest(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${index}].role`,
          null,
        );
      }
      pending.delete(id);
      continue;
    }
    if (pending.size > 0) return unansweredToolCalls(assistantIndex, pending);
    const calls =
      message.role === 'assistant' && Array.isArray(message.tool_calls) ? (message.tool_calls as UnknownRecord[]) : [];
    answerable = new Set(calls.map((call) => call.id as string));
    pending = new Set(answerable);
    assistantIndex = index;
  }
  return pending.size > 0 ? unansweredToolCalls(assistantIndex, pending) : null;
}

function validateTools(tools: unknown): OpenAIErrorBody | null {
  if (tools === undefined) return null;
  if (!Array.isArray(tools))
    return invalidRequest(
      `Invalid type for 'tools': expected an array, but got ${jsonTypeName(tools)} instead.`,
      'tools',
      'invalid_type',
    );
  for (const [index, tool] of tools.entries()) {
    if (!isRecord(tool) || !isRecord(tool.function)) return missing(`tools[${index}].function`);
    const name = tool.function.name;
    if (typeof name !== 'string') return missing(`tools[${index}].function.name`);
    if (!TOOL_NAME_PATTERN.test(name)) {
      return invalidRequest(
        `Invalid 'tools[${index}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
        `tools[${index}].function.name`,
        'invalid_value',
      );
    }
  }
  return null;
}

/** The first reason OpenAI would reject this chat completions request body, or null. */
export function validateChatRequest(body: unknown): OpenAIErrorBody | null {
  if (!isRecord(body)) return invalidRequest('We could not parse the JSON body of your request.', null, null);
  if (typeof body.model !== 'string' || body.model.length === 0) {
    return invalidRequest('you must provide a model parameter', null, null);
  }
  if (body.messages === undefined) return missing('messages');
  if (!Array.isArray(body.messages)) {
    return invalidRequest(
      `Invalid type for 'messages': expected an array, but got ${jsonTypeName(body.messages)} instead.`,
      'messages',
      'invalid_type',
    );
  }
  if (body.messages.length === 0) {
    return invalidRequest(
      "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      'messages',
      'empty_array',
    );
  }
  for (const [index, message] of body.messages.entries()) {
    const error = validateMessageShape(message, index);
    if (error) return error;
  }
  if (body.stream_options !== undefined && body.stream !== true) {
    return invalidRequest(
      "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
      'stream_options',
      null,
    );
  }
  return validateTools(body.tools) ?? validateToolOrdering(body.messages as UnknownRecord[]);
}

/**
 * What the chat templates of many open models (served by vLLM or Ollama) refuse, with the error they raise: a system
 * message anywhere but first, roles that do not alternate user/assistant starting with the user, and, when the
 * request offers no tools, a `tool` message or an assistant message carrying tool calls.
 */
export function validateStrictTemplate(body: unknown): OpenAIErrorBody | null {
  if (!isRecord(body) || !Array.isArray(body.messages)) return null;
  const messages = body.messages.filter(isRecord);
  const toolsOffered = Array.isArray(body.tools) && body.tools.length > 0;
  const templateError = (message: string) => ({ message, type: 'BadRequestError', param: null, code: null });
  const turns = messages[0]?.role === 'system' ? messages.slice(1) : messages;
  for (const [index, message] of turns.entries()) {
    if (message.role === 'system') return templateError('System message must be at the beginning.');
    if (
      !toolsOffered &&
      (message.role === 'tool' || (Array.isArray(message.tool_calls) && message.tool_calls.length > 0))
    ) {
      return templateError('This chat template does not support tool messages without tools.');
    }
    // With tools offered, a tool result takes the user's turn (as tool-aware templates render it).
    const role = message.role === 'tool' ? 'user' : message.role;
    if (role !== (index % 2 === 0 ? 'user' : 'assistant'))
      return templateError('Conversation roles must alternate user/assistant/user/assistant/...');
  }
  if (turns.length > 0 && turns.length % 2 === 0) return templateError('The last message must be from the user.');
  return null;
}
