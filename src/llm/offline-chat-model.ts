/**
 * The built-in offline model, used when no endpoint is configured. It is not a language model:
 * it answers deterministically so the product can be shown working without one.
 *
 * - `mode: 'chat'` restates the last user message and what the context held (messages, tokens,
 *   whether a summary was present, how many points it keeps and the newest one). Asked about
 *   something said earlier, it quotes the best matching recalled or window message with its seq
 *   instead (offline-recall-answer.ts). With a bound `calculator` tool it calls it for "calculate
 *   <expression>"; with a bound `save_memory` tool it calls it for "remember that <fact>" (the
 *   saved-memories view's hint); it reports a tool result it is given.
 * - `mode: 'summarizer'` returns an extractive summary of everything after the leading system
 *   message (the instructions): the folded messages (plus the previous summary, except a segment
 *   prompt's read-only earlier summary, which a new segment never repeats), keeping what people wrote
 *   — their sentences with names, numbers, identifiers and decisions, each with its seq, never the
 *   offline model's own answers (offline-summary.ts) — within a token cap (the smaller of
 *   `maxSummaryTokens` and a cap the prompt states, e.g. "at most 1200 tokens").
 *
 * The mode is chosen at construction (the factory builds one of each), never guessed from the
 * prompt, which deployments may replace.
 */
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BaseChatModelParams,
  type BindToolsInput,
} from '@langchain/core/language_models/chat_models';
import { AIMessage, AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import { ChatGenerationChunk, type ChatResult } from '@langchain/core/outputs';
import type { Runnable } from '@langchain/core/runnables';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  countChatPromptTokens,
  countTextTokens,
  type WireChatMessage,
  type OpenAIToolDefinition,
} from './count-chat-tokens.js';
import { offlineSummary } from './offline-summary.js';
import { RECALL_HEADING } from '../core/context/build-recall-slot.js';
import { bestRecalledAnswer, newestUserMessage } from './offline-recall-answer.js';
import { EARLIER_SUMMARY_CLOSING, EARLIER_SUMMARY_OPENING } from '../core/context/summary-prompt.js';
import { SAVED_MEMORY_MAX_CHARS } from '../core/saved-memories/saved-memory.js';

export type OfflineChatModelMode = 'chat' | 'summarizer';

export interface OfflineChatModelOptions extends BaseChatModelParams {
  /** Default `'chat'`. */
  mode?: OfflineChatModelMode;
  /** Summary cap in tokens when the prompt states none (or a larger one). Default 1,200. */
  maxSummaryTokens?: number;
  /** Pause between streamed chunks, so a UI shows streaming. Default 0. */
  chunkDelayMs?: number;
}

export interface OfflineChatModelCallOptions extends BaseChatModelCallOptions {
  /** Tools in OpenAI's function format (set by `bindTools`). */
  tools?: OpenAIToolDefinition[];
}

/** The model name the offline model reports in usage and labels. */
export const OFFLINE_MODEL_NAME = 'offline';

const DEFAULT_MAX_SUMMARY_TOKENS = 1_200;
const QUOTE_CHARS = 120;
const TOOL_RESULT_CHARS = 300;
/** Characters of the summary's newest point an answer quotes. */
const SUMMARY_POINT_CHARS = 70;
const BULLET_LINE = /^\s*(?:[-*•]|\d+[.)])\s+/;
const CAP_IN_PROMPT =
  /(?:at most|no more than|not exceed|under|within|maximum of|max(?:imum)?|limit of|cap(?:ped)?(?: at| of)?)\s*:?\s*~?(\d[\d,_]*)\s*tokens/i;
/** "remember that …", "please remember: …", "Hi. Remember I am vegetarian": the fact is the rest of the text. */
const REMEMBER_REQUEST =
  /(?:^|[.!?]\s+)(?:(?:please|could you|can you|kindly)\s+)?(?:remember|don't forget|do not forget)(?:\s+that)?\s*[:,]?\s+([\s\S]+)$/i;
const CALCULATE_REQUEST = /\b(?:calculate|compute|what is|what's)\s+([-+*/%^().\d\s]*\d[-+*/%^().\d\s]*)/i;

type PlannedReply = { text: string; toolCall?: { id: string; name: string; args: Record<string, unknown> } };

export class OfflineChatModel extends BaseChatModel<OfflineChatModelCallOptions> {
  readonly mode: OfflineChatModelMode;
  readonly maxSummaryTokens: number;
  readonly chunkDelayMs: number;
  readonly model = OFFLINE_MODEL_NAME;

  static override lc_name(): string {
    return 'OfflineChatModel';
  }

  constructor(options: OfflineChatModelOptions = {}) {
    super(options);
    this.mode = options.mode ?? 'chat';
    this.maxSummaryTokens = options.maxSummaryTokens ?? DEFAULT_MAX_SUMMARY_TOKENS;
    this.chunkDelayMs = options.chunkDelayMs ?? 0;
  }

  _llmType(): string {
    return 'offline';
  }

  override bindTools(
    tools: BindToolsInput[],
    kwargs?: Partial<OfflineChatModelCallOptions>,
  ): Runnable<BaseLanguageModelInput, AIMessageChunk, OfflineChatModelCallOptions> {
    const wireTools = tools.map((tool) => convertToOpenAITool(tool) as OpenAIToolDefinition);
    return this.withConfig({ ...kwargs, tools: wireTools });
  }

  override async _generate(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    let aggregate: ChatGenerationChunk | undefined;
    for await (const chunk of this._streamResponseChunks(messages, options, runManager)) {
      aggregate = aggregate ? aggregate.concat(chunk) : chunk;
    }
    const message = aggregate?.message as AIMessageChunk | undefined;
    return {
      generations: [
        {
          text: aggregate?.text ?? '',
          message: new AIMessage({
            content: message?.content ?? '',
            tool_calls: message?.tool_calls ?? [],
            usage_metadata: message?.usage_metadata,
            response_metadata: { ...aggregate?.generationInfo, model_name: OFFLINE_MODEL_NAME },
          }),
        },
      ],
    };
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    // `tool_choice: none`: the tools are in the request (and its prompt tokens) but not to be called.
    const tools = options.tool_choice === 'none' ? [] : (options.tools ?? []);
    const reply = this.mode === 'summarizer' ? { text: this.summarize(messages) } : planChatReply(messages, tools);
    for (const piece of reply.text.match(/\S+\s*|\s+/g) ?? []) {
      if (this.chunkDelayMs > 0) await sleep(this.chunkDelayMs, undefined, { signal: options.signal });
      options.signal?.throwIfAborted();
      const chunk = new ChatGenerationChunk({ text: piece, message: new AIMessageChunk({ content: piece }) });
      yield chunk;
      await runManager?.handleLLMNewToken(piece, undefined, undefined, undefined, undefined, { chunk });
    }
    if (reply.toolCall) {
      const { id, name, args } = reply.toolCall;
      yield new ChatGenerationChunk({
        text: '',
        message: new AIMessageChunk({
          content: '',
          tool_call_chunks: [{ type: 'tool_call_chunk', id, name, args: JSON.stringify(args), index: 0 }],
        }),
      });
    }
    const inputTokens = countChatPromptTokens({
      model: OFFLINE_MODEL_NAME,
      messages: messages.map(toWireMessage),
      tools: options.tools ?? [],
    });
    const outputTokens =
      countTextTokens(reply.text) + (reply.toolCall ? countTextTokens(JSON.stringify(reply.toolCall.args)) + 3 : 0);
    yield new ChatGenerationChunk({
      text: '',
      message: new AIMessageChunk({
        content: '',
        usage_metadata: {
          input_tokens: inputTokens,
          output_tokens: outputTokens,
          total_tokens: inputTokens + outputTokens,
        },
      }),
      generationInfo: { finish_reason: reply.toolCall ? 'tool_calls' : 'stop', model_name: OFFLINE_MODEL_NAME },
    });
  }

  /** Extractive summary of everything after the leading system message (offline-summary.ts). */
  private summarize(messages: BaseMessage[]): string {
    const [first, ...rest] = messages;
    const instructions = first?.type === 'system' && rest.length > 0 ? first.text : '';
    const material = instructions ? rest : messages;
    const materialText = material.map((message) => message.text).join('\n');
    const statedCap = Number(
      (CAP_IN_PROMPT.exec(instructions) ?? CAP_IN_PROMPT.exec(materialText))?.[1]?.replace(/[,_]/g, ''),
    );
    const cap = Math.min(this.maxSummaryTokens, Number.isFinite(statedCap) && statedCap > 0 ? statedCap : Infinity);
    const labelled = material.length > 1;
    const text = material
      .map((message) => withoutEarlierSummary(message.text))
      .map((text, index) => (labelled ? labelLines(roleName(material[index]!), text) : text))
      .join('\n')
      .split('\n')
      .filter((line) => !CAP_IN_PROMPT.test(line))
      .join('\n');
    return offlineSummary(text, cap);
  }
}

/** A segment prompt's earlier summary is read-only context: the new segment never repeats it. */
function withoutEarlierSummary(text: string): string {
  const start = text.indexOf(EARLIER_SUMMARY_OPENING);
  const end = start < 0 ? -1 : text.indexOf(EARLIER_SUMMARY_CLOSING, start);
  return end < 0 ? text : text.slice(0, start) + text.slice(end + EARLIER_SUMMARY_CLOSING.length);
}

function roleName(message: BaseMessage): string {
  switch (message.type) {
    case 'human':
      return 'user';
    case 'ai':
      return 'assistant';
    default:
      return message.type;
  }
}

/**
 * Prefixes a conversation message's lines with its speaker, so attribution survives extraction.
 * System messages (a previous summary, server notes) and lines already labelled stay as they are.
 */
function labelLines(role: string, text: string): string {
  if (role === 'system') return text;
  return text
    .split('\n')
    .map((line) => {
      const body = line.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, '').trim();
      return body.length === 0 || /^(?:user|assistant|tool|system)\s*:/i.test(body) ? line : `${role}: ${body}`;
    })
    .join('\n');
}

function quote(text: string, limit: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= limit ? flat : `${flat.slice(0, limit - 1)}…`;
}

/** The chat-mode answer: a tool call, a tool result report, or a restatement of the context. */
function planChatReply(messages: BaseMessage[], tools: OpenAIToolDefinition[]): PlannedReply {
  // The per-call parts at the end of a pack (the recall slot, server notes) are not what the model answers.
  const last = messages.findLast((message) => message.type !== 'system' && !message.text.startsWith(RECALL_HEADING));
  if (last?.type === 'tool') return { text: describeToolResult(messages, last) };
  const newest = newestUserMessage(messages);
  const lastUser = newest?.message;
  const calculator = tools.find((tool) => tool.function.name === 'calculator');
  // Only a request the model has not acted on yet (what may follow it is per-call text the server added).
  const pending =
    newest !== undefined &&
    !messages.slice(newest.index + 1).some((message) => message.type === 'ai' || message.type === 'tool');
  const saveMemory = tools.find((tool) => tool.function.name === 'save_memory');
  const fact = saveMemory && lastUser && pending ? rememberRequest(lastUser.text) : undefined;
  if (saveMemory && fact) return { text: '', toolCall: toolCall(messages, saveMemory, 'text', fact) };
  const expression = lastUser && pending ? CALCULATE_REQUEST.exec(lastUser.text)?.[1]?.trim() : undefined;
  if (calculator && expression) return { text: '', toolCall: toolCall(messages, calculator, 'expression', expression) };
  return { text: describeContext(messages, lastUser) };
}

/** A call of `tool` with `value` as its `preferred` argument (else its first one). */
function toolCall(
  messages: BaseMessage[],
  tool: OpenAIToolDefinition,
  preferred: string,
  value: string,
): NonNullable<PlannedReply['toolCall']> {
  const properties = Object.keys((tool.function.parameters?.properties ?? {}) as Record<string, unknown>);
  const argumentName = properties.includes(preferred) ? preferred : (properties[0] ?? preferred);
  return { id: `call_offline_${messages.length}`, name: tool.function.name, args: { [argumentName]: value } };
}

/**
 * The fact of a request to remember something ("Please remember that I prefer aisle seats." -> "I prefer aisle
 * seats."): a sentence opening with "remember" (after "please" or a greeting's sentence), not a question.
 */
export function rememberRequest(text: string): string | undefined {
  const match = REMEMBER_REQUEST.exec(text.trim());
  // The sentence it opens: what follows ("… Also, what is the time?") is not part of the fact.
  const fact = match?.[1]
    ?.replace(/\s+/g, ' ')
    .split(/(?<=[.!?])\s+/)[0]
    ?.trim();
  // "remember to call Ana" asks for a reminder, not a fact to keep.
  if (!fact || fact.endsWith('?') || /^to\s/i.test(fact) || fact.split(' ').length < 2) return undefined;
  const sentence = `${fact.charAt(0).toUpperCase()}${fact.slice(1)}`;
  const ended = /[.!]$/.test(sentence) ? sentence : `${sentence}.`;
  return ended.length <= SAVED_MEMORY_MAX_CHARS ? ended : undefined;
}

function describeToolResult(messages: BaseMessage[], toolMessage: BaseMessage): string {
  const callId = (toolMessage as BaseMessage & { tool_call_id?: string }).tool_call_id;
  const caller = [...messages]
    .reverse()
    .find((message) => message.type === 'ai' && (message as AIMessage).tool_calls?.some((call) => call.id === callId));
  const name = (caller as AIMessage | undefined)?.tool_calls?.find((call) => call.id === callId)?.name ?? 'the tool';
  return `[offline model] ${name} returned: ${quote(toolMessage.text, TOOL_RESULT_CHARS)}`;
}

const SUMMARY_HEADING = /^## Summary of the conversation so far[^\n]*\n/m;

/**
 * A short restatement: what was said, what the context held, and how many points the summary keeps with the newest
 * one quoted (so a newcomer sees the summary at work without the reply burying the conversation). The endpoint hint
 * comes once, in the first answer of a context.
 */
function describeContext(messages: BaseMessage[], lastUser: BaseMessage | undefined): string {
  const counts = { system: 0, user: 0, assistant: 0, tool: 0 } as Record<string, number>;
  for (const message of messages) counts[roleName(message)] = (counts[roleName(message)] ?? 0) + 1;
  const tokens = countChatPromptTokens({ model: OFFLINE_MODEL_NAME, messages: messages.map(toWireMessage) });
  // The pack's leading system message is the system prompt, then the summary section under the heading
  // written by the core's summaryHeading(); identifiers come from the summary, not the prompt.
  const leading = messages[0]?.type === 'system' ? messages[0] : undefined;
  const heading = leading ? SUMMARY_HEADING.exec(leading.text) : null;
  const summaryText = heading && leading ? leading.text.slice(heading.index + heading[0].length) : '';
  // What the summary keeps, named by its newest point (not by identifiers: a bare "#13" or "000" says nothing).
  const points = summaryText
    .split('\n')
    .filter((line) => BULLET_LINE.test(line))
    .map((line) => line.replace(BULLET_LINE, '').trim());
  const newestPoint = points.at(-1);
  // Asked about something said earlier: quote the message of the context that answers it, instead of the question.
  const recalled = bestRecalledAnswer(messages, lastUser);
  const said = recalled
    ? `[#${recalled.seq}] (${recalled.role === 'user' ? 'you' : recalled.role}, ${recalled.source === 'recalled' ? 'recalled from earlier' : 'in my window'}) says: "${quote(recalled.text, QUOTE_CHARS)}".`
    : lastUser
      ? `You said: "${quote(lastUser.text, QUOTE_CHARS)}".`
      : 'I received no user message.';
  const parts = [
    `[offline model] ${said}`,
    `My context: ${messages.length} messages (${counts.system} system, ${counts.user} user, ${counts.assistant} assistant, ${counts.tool} tool), ${tokens} tokens,`,
    heading ? 'including a summary of earlier messages.' : 'with no summary yet.',
    newestPoint && !recalled
      ? `The summary keeps ${points.length} point${points.length === 1 ? '' : 's'}, the newest: "${quote(newestPoint, SUMMARY_POINT_CHARS)}".`
      : '',
    counts.assistant === 0 ? 'Set OPENAI_API_KEY or OPENAI_BASE_URL to chat with a real model.' : '',
  ];
  return parts.filter((part) => part.length > 0).join(' ');
}

/** A LangChain message in OpenAI's wire shape, for counting. */
function toWireMessage(message: BaseMessage): WireChatMessage {
  const toolCalls = message.type === 'ai' ? ((message as AIMessage).tool_calls ?? []) : [];
  return {
    role: roleName(message),
    content: message.text,
    ...(toolCalls.length > 0 && {
      tool_calls: toolCalls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: JSON.stringify(call.args) },
      })),
    }),
  };
}
