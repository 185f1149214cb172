import { z } from 'zod';
import type { OpenAIClientSettings } from '../../core/context/types';
import { AppError } from '../../core/errors/app-error';
import type { ClientMessage, ClientToolCall } from '../../core/ports';
import { joinInstructions } from '../openai-facade/chat-request';
import type { FacadeHttpDeps } from '../openai-facade/facade-deps';
import { checkModel } from '../openai-facade/facade-request';
import { MAX_INPUT_ITEMS, MAX_TOOLS, USER_ITEM_SEPARATOR } from '../openai-responses/responses-request';
import { responseToolsOf, type ResponseTools } from '../openai-responses/response-tools';

/** Most content blocks one message may hold. */
const MAX_BLOCKS = 10_000;

const block = z.object({ type: z.string().max(100) }).loose();
const content = z.union([z.string(), z.array(block).max(MAX_BLOCKS)]);
const textBlock = z.object({ type: z.literal('text'), text: z.string() }).loose();

const message = z.object({ role: z.enum(['user', 'assistant']), content }).loose();

const tool = z
  .object({
    type: z.string().max(100).nullable().optional(),
    name: z.string().max(200),
    description: z.string().optional(),
    input_schema: z.record(z.string(), z.unknown()).optional(),
  })
  .loose();

/** What POST /v1/messages/count_tokens reads (other Anthropic fields are accepted and ignored). */
export const countTokensBody = z
  .object({
    model: z.string().min(1).max(200),
    messages: z.array(message).min(1, 'must hold at least one message').max(MAX_INPUT_ITEMS),
    system: z.union([z.string(), z.array(textBlock).max(MAX_BLOCKS)]).optional(),
    tools: z.array(tool).max(MAX_TOOLS).optional(),
    metadata: z
      .object({ user_id: z.string().max(256).nullable().optional() })
      .loose()
      .optional(),
  })
  .loose();

/**
 * The body of POST /v1/messages as far as this server reads it. `tool_choice`, `temperature`, `stop_sequences`,
 * `thinking` and `cache_control` marks are accepted and ignored (our pack decides the cache breakpoints).
 */
export const messagesBody = countTokensBody.extend({
  max_tokens: z.number().int().min(1),
  stream: z.boolean().nullable().optional(),
});

export type MessagesBody = z.infer<typeof messagesBody>;
type Block = z.infer<typeof block>;

function invalid(field: string, text: string): AppError {
  return new AppError('VALIDATION', `${field}: ${text}`, { details: { field } });
}

function parse<T>(schema: z.ZodType<T>, raw: unknown): T {
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.length ? issue.path.map(String).join('.') : 'body';
  throw invalid(field, issue?.message ?? 'invalid');
}

/** Blocks this server keeps no copy of: refused, naming the block (its conversations are text). */
const MEDIA = new Set(['image', 'document']);

/** Blocks that carry nothing to keep: a model's thinking (its signature is the upstream's). */
const DROPPED = new Set(['thinking', 'redacted_thinking']);

function refuseBlock(type: string, field: string): AppError {
  if (MEDIA.has(type))
    return invalid(`${field}.type`, `"${type}" blocks are not accepted: this server's model takes text only`);
  return invalid(`${field}.type`, `"${type}" blocks are not accepted here (text, tool_use, tool_result, thinking)`);
}

const textOf = (value: Block, field: string): string => {
  if (typeof value.text !== 'string') throw invalid(`${field}.text`, 'a text block carries its text');
  return value.text;
};

/** A tool_result's content: a string or text blocks (joined), prefixed when the client says the call failed. */
function toolResultText(value: Block, field: string): string {
  const result = value.content ?? '';
  let text: string;
  if (typeof result === 'string') text = result;
  else if (Array.isArray(result))
    text = (result as unknown[])
      .map((inner, index) => {
        const parsed = block.safeParse(inner);
        const innerField = `${field}.content.${index}`;
        if (!parsed.success || parsed.data.type !== 'text') throw refuseBlock(parsed.data?.type ?? '?', innerField);
        return textOf(parsed.data, innerField);
      })
      .join(USER_ITEM_SEPARATOR);
  else throw invalid(`${field}.content`, 'a string or text blocks');
  return value.is_error === true ? `Error: ${text}` : text;
}

function toolUseOf(value: Block, field: string): ClientToolCall {
  const { id, name, input } = value as { id?: unknown; name?: unknown; input?: unknown };
  if (typeof id !== 'string' || id === '' || id.length > 200) throw invalid(`${field}.id`, '1 to 200 characters');
  if (typeof name !== 'string' || name === '' || name.length > 200)
    throw invalid(`${field}.name`, '1 to 200 characters');
  if (input !== undefined && (typeof input !== 'object' || input === null || Array.isArray(input)))
    throw invalid(`${field}.input`, 'an object');
  return { id, name, arguments: JSON.stringify(input ?? {}) };
}

/** One assistant message: its text blocks as the answer's text, its tool_use blocks as its calls. */
function assistantOf(blocks: readonly Block[], field: string, openCalls: Set<string>): ClientMessage {
  const texts: string[] = [];
  const toolCalls: ClientToolCall[] = [];
  blocks.forEach((each, index) => {
    const blockField = `${field}.${index}`;
    if (each.type === 'text') texts.push(textOf(each, blockField));
    else if (each.type === 'tool_use') toolCalls.push(toolUseOf(each, blockField));
    else if (!DROPPED.has(each.type)) throw refuseBlock(each.type, blockField);
  });
  for (const call of toolCalls) openCalls.add(call.id);
  return { role: 'assistant', content: texts.join(''), toolCalls };
}

/** One user message: its tool_result blocks as tool messages, then its text blocks as one user message. */
function userOf(blocks: readonly Block[], field: string, openCalls: Set<string>): ClientMessage[] {
  const results: ClientMessage[] = [];
  const texts: string[] = [];
  blocks.forEach((each, index) => {
    const blockField = `${field}.${index}`;
    if (each.type === 'text') texts.push(textOf(each, blockField));
    else if (each.type === 'tool_result') {
      const id = each.tool_use_id;
      if (typeof id !== 'string' || !openCalls.has(id))
        throw invalid(`${blockField}.tool_use_id`, `no earlier assistant message called ${String(id)}`);
      results.push({ role: 'tool', toolCallId: id, content: toolResultText(each, blockField) });
    } else throw refuseBlock(each.type, blockField);
  });
  return texts.length > 0 ? [...results, { role: 'user', content: texts.join(USER_ITEM_SEPARATOR) }] : results;
}

/** The history as the core reads it (consecutive user texts are one message, as on /v1/responses). */
export function clientMessagesOf(body: Pick<MessagesBody, 'messages'>): ClientMessage[] {
  const messages: ClientMessage[] = [];
  const openCalls = new Set<string>();
  body.messages.forEach((each, index) => {
    const field = `messages.${index}.content`;
    const blocks = typeof each.content === 'string' ? [{ type: 'text', text: each.content }] : each.content;
    if (each.role === 'assistant') {
      messages.push(assistantOf(blocks, field, openCalls));
      return;
    }
    for (const added of userOf(blocks, field, openCalls)) {
      const last = messages.at(-1);
      if (added.role === 'user' && last?.role === 'user')
        last.content = `${last.content}${USER_ITEM_SEPARATOR}${added.content}`;
      else messages.push(added);
    }
  });
  if (!messages.some((each) => each.role === 'user')) throw invalid('messages', 'must hold at least one user message');
  return messages;
}

/** `system`: a string or text blocks, the client's instructions (at most MAX_CLIENT_INSTRUCTIONS_CHARS). */
function instructionsOf(body: Pick<MessagesBody, 'system'>, maxChars: number): string | null {
  const system = body.system ?? '';
  const texts = typeof system === 'string' ? [system] : system.map((each) => each.text);
  return joinInstructions([texts.join(USER_ITEM_SEPARATOR)], maxChars, 'system');
}

/** Anthropic's client tools as the Responses route reads function tools; typed (Anthropic-hosted) ones are dropped. */
function toolsOf(body: Pick<MessagesBody, 'tools'>, facade: FacadeHttpDeps): ResponseTools {
  const tools = (body.tools ?? []).map((each) =>
    each.type && each.type !== 'custom'
      ? { type: each.type }
      : {
          type: 'function',
          name: each.name,
          description: each.description,
          parameters: each.input_schema ?? { type: 'object', properties: {} },
        },
  );
  return responseToolsOf(tools, facade.serverToolNames(), facade.maxToolDescriptionChars);
}

/** A Messages request, read and checked before anything is spent or stored. */
export interface ReadMessagesRequest<Body> {
  body: Body;
  messages: ClientMessage[];
  tools: ResponseTools;
  /** The client's settings for the thread: its system text and its tools. */
  client: OpenAIClientSettings;
}

function readBody<Body extends z.infer<typeof countTokensBody>>(
  body: Body,
  facade: FacadeHttpDeps,
): ReadMessagesRequest<Body> {
  const tools = toolsOf(body, facade);
  const messages = clientMessagesOf(body);
  const instructions = instructionsOf(body, facade.maxClientInstructionsChars);
  checkModel(body.model, facade);
  return { body, messages, tools, client: { instructions, tools: tools.tools } };
}

/** Reads a POST /v1/messages body; `max_tokens` is required, as Anthropic's API requires it. */
export function readMessagesRequest(raw: unknown, facade: FacadeHttpDeps): ReadMessagesRequest<MessagesBody> {
  if ((raw as { max_tokens?: unknown } | undefined)?.max_tokens === undefined)
    throw invalid('max_tokens', 'required (the most tokens the answer may have)');
  return readBody(parse(messagesBody, raw), facade);
}

/** Reads a POST /v1/messages/count_tokens body (without a model: CHAT_MODEL, as /v1/responses/input_tokens). */
export function readCountTokensRequest(
  raw: unknown,
  facade: FacadeHttpDeps,
): ReadMessagesRequest<z.infer<typeof countTokensBody>> {
  return readBody(parse(countTokensBody, { model: facade.models[0], ...(raw as object | undefined) }), facade);
}
