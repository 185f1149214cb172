import { z } from 'zod';
import { AppError } from '../../core/errors/app-error';
import type { ClientMessage, ClientToolCall } from '../../core/ports';
import { joinInstructions } from '../openai-facade/chat-request';
import { upstreamNameOf } from './response-tools';
import { codexSummaryOf } from './codex-local-summary';

/** Most items one `input` may hold (a stateless client sends its whole history). */
export const MAX_INPUT_ITEMS = 100_000;

/** Most tools one request may offer (hosted ones included: they are dropped, but still read). */
export const MAX_TOOLS = 128;

/** Between two user items sent in a row (Codex sends its `<environment_context>`, then the prompt): one turn. */
export const USER_ITEM_SEPARATOR = '\n\n';

const part = z.object({ type: z.string().max(100), text: z.string().optional() }).loose();
const text = z.union([z.string(), z.array(part).max(10_000)]);

const messageItem = z
  .object({
    type: z.literal('message').optional(),
    role: z.string().max(100),
    content: text,
  })
  .loose();

const functionCallItem = z
  .object({
    type: z.literal('function_call'),
    call_id: z.string().min(1).max(200),
    name: z.string().min(1).max(200),
    namespace: z.string().max(200).optional(),
    arguments: z.string().default('{}'),
  })
  .loose();

const functionCallOutputItem = z
  .object({
    type: z.literal('function_call_output'),
    call_id: z.string().min(1).max(200),
    output: text,
  })
  .loose();

const compactionInputItem = z
  .object({
    type: z.literal('compaction'),
    encrypted_content: z.string().max(100_000),
  })
  .loose();

const tool = z.object({ type: z.string().max(100) }).loose();

/** `context_management`: OpenAI's server-side compaction, here the conversation's fold trigger. */
const contextManagement = z
  .array(
    z
      .object({
        type: z.string().max(100),
        compact_threshold: z.number().int().positive().max(100_000_000).nullable().optional(),
      })
      .loose(),
  )
  .max(10);

/** The body of POST /v1/responses as far as this server reads it (other OpenAI fields are accepted and ignored). */
export const responseBody = z
  .object({
    model: z.string().min(1).max(200),
    input: z.union([
      z.string(),
      z.array(z.object({ type: z.string().max(100).optional() }).loose()).max(MAX_INPUT_ITEMS),
    ]),
    instructions: z.string().nullable().optional(),
    previous_response_id: z.string().max(200).nullable().optional(),
    conversation: z
      .union([z.string().max(200), z.object({ id: z.string().max(200) }).loose()])
      .nullable()
      .optional(),
    stream: z.boolean().nullable().optional(),
    background: z.boolean().nullable().optional(),
    store: z.boolean().nullable().optional(),
    tools: z.array(tool).max(MAX_TOOLS).optional(),
    metadata: z.record(z.string().max(64), z.string().max(512)).nullable().optional(),
    user: z.string().max(200).optional(),
    context_management: contextManagement.nullable().optional(),
  })
  .loose();

export type ResponseBody = z.infer<typeof responseBody>;

function invalid(field: string, message: string): AppError {
  return new AppError('VALIDATION', `${field}: ${message}`, { details: { field } });
}

/** A value of a schema, or a 400 naming the first field that is wrong (`input.3.call_id`). */
function parseOrRefuse<T>(schema: z.ZodType<T>, value: unknown, prefix: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = [prefix, ...(issue?.path ?? []).map(String)].filter(Boolean).join('.') || 'body';
  throw invalid(field, issue?.message ?? 'invalid');
}

/** The body, or a 400 naming the first field that is wrong. */
export function parseResponseBody(body: unknown): ResponseBody {
  return parseOrRefuse(responseBody, body ?? {}, '');
}

/** The text of a message's content: a string, or its text parts; an image or a file is refused, naming the part. */
function textOf(value: z.infer<typeof text>, field: string): string {
  if (typeof value === 'string') return value;
  return value
    .map((each, index) => {
      const textPart = ['input_text', 'output_text', 'text', 'summary_text', 'refusal'].includes(each.type);
      if (!textPart || typeof each.text !== 'string')
        throw invalid(
          `${field}.${index}.type`,
          `only text content is accepted here, not "${each.type}" (the model this server speaks to reads text)`,
        );
      return each.text;
    })
    .join('');
}

/** A client history being read: its messages, its instructions, and the calls its results may answer. */
interface Reading {
  messages: ClientMessage[];
  instructions: string[];
  openCalls: Set<string>;
  /** The last item read was an assistant message or call (a call joins it): false after anything else. */
  assistantOpen: boolean;
  /** The last compaction item read (what came before it, but the instructions, it stands for). */
  compaction: { token: string; field: string } | null;
  /** The last Codex handoff summary read (a local compaction's rebuilt history: it stands for what came before it). */
  handoff: { summary: string; field: string } | null;
}

/** A point the history starts over from (a compaction item, a handoff summary): the messages before it are dropped. */
function startOver(reading: Reading): void {
  reading.messages = [];
  reading.openCalls.clear();
  reading.assistantOpen = false;
  reading.compaction = null;
  reading.handoff = null;
}

function readMessage(reading: Reading, item: unknown, field: string): void {
  const message = parseOrRefuse(messageItem, item, field);
  const content = textOf(message.content, `${field}.content`);
  switch (message.role) {
    case 'system':
    case 'developer':
      reading.instructions.push(content);
      return;
    case 'user': {
      const summary = codexSummaryOf(content);
      if (summary !== null) {
        startOver(reading);
        reading.handoff = { summary, field };
        return;
      }
      reading.assistantOpen = false;
      const last = reading.messages.at(-1);
      // User items in a row are one turn (the same join every time, so a resent history matches what was stored).
      if (last?.role === 'user') last.content = `${last.content}${USER_ITEM_SEPARATOR}${content}`;
      else reading.messages.push({ role: 'user', content });
      return;
    }
    case 'assistant':
      reading.messages.push({ role: 'assistant', content, toolCalls: [] });
      reading.assistantOpen = true;
      return;
    default:
      throw invalid(`${field}.role`, `unknown role "${message.role}" (user, assistant, system or developer)`);
  }
}

function readFunctionCall(reading: Reading, item: unknown, field: string): void {
  const call = parseOrRefuse(functionCallItem, item, field);
  const toolCall: ClientToolCall = {
    id: call.call_id,
    name: call.namespace ? upstreamNameOf(call.namespace, call.name) : call.name,
    arguments: call.arguments,
  };
  const last = reading.messages.at(-1);
  if (reading.assistantOpen && last?.role === 'assistant') last.toolCalls.push(toolCall);
  else reading.messages.push({ role: 'assistant', content: '', toolCalls: [toolCall] });
  reading.assistantOpen = true;
  reading.openCalls.add(call.call_id);
}

/** A compaction item: it stands for the conversation so far, so the messages read before it are dropped. */
function readCompaction(reading: Reading, item: unknown, field: string): void {
  const compaction = parseOrRefuse(compactionInputItem, item, field);
  startOver(reading);
  reading.compaction = { token: compaction.encrypted_content, field };
}

function readFunctionCallOutput(reading: Reading, item: unknown, field: string, continuing: boolean): void {
  const result = parseOrRefuse(functionCallOutputItem, item, field);
  // After a compaction item, a result may answer a call the compacted part holds.
  if (!continuing && !reading.compaction && !reading.handoff && !reading.openCalls.has(result.call_id))
    throw invalid(`${field}.call_id`, `no earlier function_call has the call_id ${result.call_id}`);
  reading.assistantOpen = false;
  reading.messages.push({
    role: 'tool',
    toolCallId: result.call_id,
    content: textOf(result.output, `${field}.output`),
  });
}

/** What a request's `input` says: the history (or its new part) as the core reads it, and the client's instructions. */
export interface ResponseInput {
  messages: ClientMessage[];
  /** The system and developer messages, joined: the thread's client instructions (null: none sent). */
  instructions: string | null;
  /** The last `compaction` item's token and where it was (`input.N`); `messages` are the items after it. */
  compaction: { token: string; field: string } | null;
  /** The input ended with a `compaction_trigger` item: compact now, answer with one compaction item. */
  compactionTrigger: boolean;
  /**
   * The last Codex handoff summary (its local compaction's rebuilt history) and where it was; `messages` are the items
   * after it. It stands for the conversation through the answer it was taken from.
   */
  handoff: { summary: string; field: string } | null;
}

/**
 * The request's `input` as the core reads it: messages (user items in a row joined into one), function calls joined to
 * the assistant message before them, their outputs as tool messages; system and developer messages become the
 * client's instructions (at most `maxInstructionsChars`); reasoning items are dropped (the upstream speaks Chat
 * Completions); a `compaction` item stands for everything before it but the instructions (the messages are those
 * after the last one), and a last `compaction_trigger` item asks for a compaction. `continuing`: the input goes on from a stored response (previous_response_id, a conversation), so
 * its function_call_output items may answer calls it does not hold.
 */
export function responseInputOf(
  body: ResponseBody,
  options: { maxInstructionsChars: number; continuing: boolean },
): ResponseInput {
  const reading: Reading = {
    messages: [],
    instructions: [],
    openCalls: new Set(),
    assistantOpen: false,
    compaction: null,
    handoff: null,
  };
  const items = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : body.input;
  const compactionTrigger = items.at(-1)?.type === 'compaction_trigger';
  items.forEach((item, index) => {
    const field = `input.${index}`;
    switch (item.type ?? 'message') {
      case 'message':
        readMessage(reading, item, field);
        return;
      case 'function_call':
        readFunctionCall(reading, item, field);
        return;
      case 'function_call_output':
        readFunctionCallOutput(reading, item, field, options.continuing);
        return;
      case 'reasoning':
        return;
      case 'compaction':
        readCompaction(reading, item, field);
        return;
      case 'compaction_trigger':
        if (index === items.length - 1) return;
        throw invalid(`${field}.type`, 'a compaction_trigger item can only be the last item of the input');
      default:
        throw invalid(
          `${field}.type`,
          `"${item.type}" items are not accepted here (message, function_call, function_call_output, reasoning, compaction, compaction_trigger)`,
        );
    }
  });
  return {
    messages: reading.messages,
    instructions: joinInstructions(reading.instructions, options.maxInstructionsChars, 'input'),
    compaction: reading.compaction,
    compactionTrigger,
    handoff: reading.handoff,
  };
}
