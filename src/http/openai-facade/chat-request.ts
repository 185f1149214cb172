import { z } from 'zod';
import { DEFAULT_MAX_CLIENT_INSTRUCTIONS_CHARS } from '../../core/context/client-instructions';
import { AppError } from '../../core/errors/app-error';
import type { OpenAIClientSettings } from '../../core/context/types';
import type { ClientMessage, ClientToolCall } from '../../core/ports';

/** Text, or OpenAI's content parts (only text parts are read; others are refused). */
const content = z
  .union([z.string(), z.array(z.object({ type: z.string(), text: z.string().optional() }).loose()), z.null()])
  .optional();

const toolCall = z
  .object({
    id: z.string().min(1).max(200),
    type: z.literal('function').optional(),
    function: z.object({ name: z.string().min(1).max(200), arguments: z.string().default('{}') }),
  })
  .loose();

const message = z
  .object({
    role: z.string(),
    content,
    name: z.string().optional(),
    tool_calls: z.array(toolCall).optional(),
    tool_call_id: z.string().optional(),
  })
  .loose();

const functionTool = z
  .object({
    type: z.literal('function'),
    function: z
      .object({
        name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and -, at most 64'),
        description: z.string().optional(),
        parameters: z.record(z.string(), z.unknown()).optional(),
        strict: z.boolean().nullable().optional(),
      })
      .loose(),
  })
  .loose();

/** The body of POST /v1/chat/completions as far as this server reads it (other OpenAI fields are accepted and ignored). */
export const chatCompletionBody = z
  .object({
    model: z.string().min(1).max(200),
    messages: z.array(message).min(1, 'must hold at least one message').max(100_000),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).loose().nullable().optional(),
    tools: z.array(functionTool).max(128).optional(),
    user: z.string().max(200).optional(),
  })
  .loose();

export type ChatCompletionBody = z.infer<typeof chatCompletionBody>;

/** The body, or a 400 naming the first field that is wrong (`messages.3.role`). */
export function parseChatCompletionBody(body: unknown): ChatCompletionBody {
  const parsed = chatCompletionBody.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.length ? issue.path.map(String).join('.') : 'body';
  throw new AppError('VALIDATION', `${field}: ${issue?.message ?? 'invalid'}`, { details: { field } });
}

function invalid(field: string, message: string): AppError {
  return new AppError('VALIDATION', `${field}: ${message}`, { details: { field } });
}

function textOf(value: z.infer<typeof content>, field: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  return value
    .map((part, index) => {
      if (part.type !== 'text' || typeof part.text !== 'string')
        throw invalid(`${field}.${index}.type`, `only text content is accepted here, not "${part.type}"`);
      return part.text;
    })
    .join('');
}

/**
 * The history as the core reads it: system (and developer) messages become the client's instructions, at most
 * `maxInstructionsChars` joined (MAX_CLIENT_INSTRUCTIONS_CHARS).
 */
export function clientHistoryOf(
  body: ChatCompletionBody,
  maxInstructionsChars = DEFAULT_MAX_CLIENT_INSTRUCTIONS_CHARS,
): { messages: ClientMessage[]; instructions: string | null; requestIndexes: number[] } {
  const messages: ClientMessage[] = [];
  // Where each of `messages` stands in the request (system and developer messages are not among them).
  const requestIndexes: number[] = [];
  const instructions: string[] = [];
  const openCalls = new Set<string>();
  body.messages.forEach((each, index) => {
    const field = `messages.${index}`;
    switch (each.role) {
      case 'system':
      case 'developer':
        instructions.push(textOf(each.content, `${field}.content`));
        return;
      case 'user':
        requestIndexes.push(index);
        messages.push({ role: 'user', content: textOf(each.content, `${field}.content`) });
        return;
      case 'assistant': {
        const toolCalls: ClientToolCall[] = (each.tool_calls ?? []).map((call) => ({
          id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        }));
        for (const call of toolCalls) openCalls.add(call.id);
        requestIndexes.push(index);
        messages.push({ role: 'assistant', content: textOf(each.content, `${field}.content`), toolCalls });
        return;
      }
      case 'tool': {
        if (!each.tool_call_id) throw invalid(`${field}.tool_call_id`, 'a tool message names the call it answers');
        if (!openCalls.has(each.tool_call_id))
          throw invalid(`${field}.tool_call_id`, `no earlier assistant message called ${each.tool_call_id}`);
        requestIndexes.push(index);
        messages.push({
          role: 'tool',
          toolCallId: each.tool_call_id,
          content: textOf(each.content, `${field}.content`),
        });
        return;
      }
      default:
        throw invalid(`${field}.role`, `unknown role "${each.role}" (system, developer, user, assistant or tool)`);
    }
  });
  if (!messages.some((each) => each.role === 'user')) throw invalid('messages', 'must hold at least one user message');
  return {
    messages,
    instructions: joinInstructions(instructions, maxInstructionsChars, 'messages'),
    requestIndexes,
  };
}

/**
 * A refusal of the history as the client numbers its messages: the core counts `messages[i]` among the
 * conversation's messages, without the system and developer ones the request may hold before them.
 */
export function inRequestIndexes(error: unknown, requestIndexes: readonly number[]): unknown {
  if (!(error instanceof AppError) || error.code !== 'VALIDATION' || !/messages\[\d+\]/.test(error.message))
    return error;
  const message = error.message.replace(
    /messages\[(\d+)\]/g,
    (whole, index: string) => `messages[${requestIndexes[Number(index)] ?? index}]`,
  );
  return new AppError('VALIDATION', message, { cause: error, ...(error.details ? { details: error.details } : {}) });
}

/**
 * A client's system and developer texts as the thread keeps them (joined by a blank line; null when there are none),
 * or 413 past `maxChars` naming `field`.
 */
export function joinInstructions(texts: readonly string[], maxChars: number, field: string): string | null {
  const joined = texts.filter((text) => text.trim() !== '').join('\n\n');
  if (joined.length > maxChars)
    throw new AppError(
      'TOO_LARGE',
      `The system and developer messages have ${joined.length} characters; the limit is ${maxChars} (MAX_CLIENT_INSTRUCTIONS_CHARS).`,
      { details: { field } },
    );
  return joined === '' ? null : joined;
}

/** The client's tools as the model is offered them (a tool without parameters takes none). */
export function clientToolsOf(body: ChatCompletionBody): OpenAIClientSettings['tools'] {
  return (body.tools ?? []).map((tool) => ({
    type: 'function' as const,
    function: {
      name: tool.function.name,
      description: tool.function.description ?? '',
      parameters: tool.function.parameters ?? { type: 'object', properties: {} },
    },
  }));
}
