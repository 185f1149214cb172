/**
 * A context pack as one Anthropic Messages API request, with the prompt cache's breakpoints on the pack's stable parts.
 * Pure: the request it returns is exactly what is sent (anthropic-chat-model.ts), so what is tested here is the wire.
 *
 * - The leading system message (system prefix, client instructions, saved memories, summary) is `system`, cut into
 *   text blocks where its stable parts end (PackMessage.stableEnds): the head (prefix, instructions, memories), each
 *   summary segment, the summary's coverage line. Breakpoint 1 on the head, and one on the newest segment: a fold
 *   appends a segment after the earlier ones, so the next call reads the head and the earlier segments (written by
 *   the calls before the fold: the 20-block lookback finds them) and writes only the new segment on. Without a
 *   summary, one block and one breakpoint. Tools come before it in Anthropic's order (tools → system → messages).
 * - Every other pack message is one content block (never joined text: joining moves the cache boundary every call),
 *   consecutive messages of one role share one message; server notes (later system messages) are user text, tool calls
 *   `tool_use` blocks, tool results `tool_result` blocks in the very next user message.
 * - Breakpoint 2 on the last block of the newest window message (the last one carrying a `seq`) or, after it, of a
 *   recall note the next calls hold in place (`held`: sticky recall): the per-call parts after it (a slot not held,
 *   notes) are blocks of their own after it, outside the cached prefix. A held slot inside the breakpoint is written
 *   once (1.25×) and read by the next calls (0.1×); outside it, it was sent uncached (1×) and then written (1.25×).
 * - Breakpoint 3 on the last tool definition.
 */
import type {
  ContentBlockParam,
  MessageCreateParamsNonStreaming,
  MessageParam,
  RedactedThinkingBlockParam,
  TextBlockParam,
  ThinkingBlockParam,
  Tool,
  ToolResultBlockParam,
  ToolUseBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import type { OpenAIFunctionTool, PackMessage } from '../core/context/types.js';

/** Placed first when the messages would otherwise open with the assistant's (the Messages API wants the user's first). */
export const OPENING_USER_TEXT = '(The conversation continues.)';
/** Server notes (non-leading system messages) go as user text, marked so the model can tell them from the user's. */
export const SERVER_NOTE_MARK = '[Server note] ';
/** The tool_result of a tool call whose result the pack does not hold (the API refuses a call without one). */
export const MISSING_TOOL_RESULT = '(no result recorded)';

/** Thinking blocks exactly as the API returned them (their signatures must go back unchanged). */
export type ThinkingBlocks = readonly (ThinkingBlockParam | RedactedThinkingBlockParam)[];

export interface AnthropicRequestOptions {
  model: string;
  /** `max_tokens` (the profile's output reserve); always sent, the API requires it. */
  maxTokens: number;
  /** PROMPT_CACHE_TTL as Anthropic's breakpoint `ttl`. */
  cacheTtl: '5m' | '1h';
  tools?: readonly OpenAIFunctionTool[];
  toolChoice?: 'auto' | 'none';
  temperature?: number;
  /** Extended thinking's `budget_tokens`; absent: off. */
  thinkingBudgetTokens?: number;
  /**
   * The thinking blocks an earlier round of this turn's tool loop returned with its tool calls, by the id of its first
   * tool call. Only the current loop's go back (earlier turns' are dropped, as the API allows).
   */
  thinkingOf?: (firstToolCallId: string) => ThinkingBlocks | undefined;
}

type Block = ContentBlockParam;
type Cacheable = TextBlockParam | ToolUseBlockParam | ToolResultBlockParam;

interface Entry {
  role: 'user' | 'assistant';
  blocks: Block[];
}

/** OpenAI's function format as Anthropic's tool definition. */
/**
 * A call's `max_tokens`: the answer's cap, and with thinking (whose tokens count toward it, and which it must exceed)
 * the budget on top of it. Also the most output a call can bill (the spend limits' worst case).
 */
export function anthropicMaxTokens(answerCap: number, thinkingBudget: number | null | undefined): number {
  return thinkingBudget !== null && thinkingBudget !== undefined && thinkingBudget >= answerCap
    ? thinkingBudget + answerCap
    : answerCap;
}

export function toAnthropicTool(tool: OpenAIFunctionTool): Tool {
  const parameters = tool.function.parameters;
  return {
    name: tool.function.name,
    ...(tool.function.description ? { description: tool.function.description } : {}),
    input_schema: { type: 'object', ...parameters } as Tool['input_schema'],
  };
}

function textBlock(text: string): TextBlockParam {
  return { type: 'text', text };
}

/** One pack message's blocks (empty text is left out: the API refuses empty text blocks). */
function blocksOf(message: PackMessage, thinking: ThinkingBlocks | undefined): Entry {
  switch (message.role) {
    case 'system':
      return { role: 'user', blocks: [textBlock(SERVER_NOTE_MARK + message.content)] };
    case 'user':
      return { role: 'user', blocks: message.content.trim() !== '' ? [textBlock(message.content)] : [] };
    case 'tool': {
      const result: ToolResultBlockParam = { type: 'tool_result', tool_use_id: message.toolCallId ?? '' };
      if (message.content !== '') result.content = message.content;
      return { role: 'user', blocks: [result] };
    }
    case 'assistant': {
      const blocks: Block[] = [...(thinking ?? [])];
      if (message.content.trim() !== '') blocks.push(textBlock(message.content));
      for (const call of message.toolCalls ?? [])
        blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: call.args });
      return { role: 'assistant', blocks };
    }
  }
}

/**
 * Keeps every tool_use answered in the next user message, results first (the API's rule): a result whose call is not
 * in the assistant message before it becomes text, a call without a result gets `MISSING_TOOL_RESULT`.
 */
function pairToolBlocks(entries: Entry[]): void {
  for (let index = 0; index < entries.length; index += 1) {
    const entry = entries[index]!;
    if (entry.role !== 'user') continue;
    const previous = entries[index - 1];
    const calls = new Set(
      previous?.role === 'assistant'
        ? previous.blocks.flatMap((block) => (block.type === 'tool_use' ? [block.id] : []))
        : [],
    );
    entry.blocks = entry.blocks.map((block) =>
      block.type === 'tool_result' && !calls.has(block.tool_use_id)
        ? textBlock(`[Tool result ${block.tool_use_id}]\n${typeof block.content === 'string' ? block.content : ''}`)
        : block,
    );
    const answered = new Set(
      entry.blocks.flatMap((block) => (block.type === 'tool_result' ? [block.tool_use_id] : [])),
    );
    const missing: Block[] = [...calls]
      .filter((id) => !answered.has(id))
      .map((id) => ({ type: 'tool_result', tool_use_id: id, content: MISSING_TOOL_RESULT, is_error: true }));
    const results = entry.blocks.filter((block) => block.type === 'tool_result');
    const others = entry.blocks.filter((block) => block.type !== 'tool_result');
    entry.blocks = [...results, ...missing, ...others];
  }
  // An assistant message with calls at the very end (nothing answered it yet) gets its missing results too.
  const last = entries.at(-1);
  if (last?.role === 'assistant' && last.blocks.some((block) => block.type === 'tool_use')) {
    entries.push({ role: 'user', blocks: [] });
    pairToolBlocks(entries.slice(-2));
  }
}

function withCacheControl(block: Block, ttl: '5m' | '1h'): void {
  (block as Cacheable).cache_control = { type: 'ephemeral', ttl };
}

/**
 * The leading system message as text blocks cut at its stable ends, with a breakpoint on the head (the first block)
 * and on the newest summary segment (the block before the coverage line); one block with one breakpoint when nothing
 * cuts it.
 */
function systemBlocks(leading: PackMessage, ttl: '5m' | '1h'): TextBlockParam[] {
  const text = leading.content;
  const cuts = (leading.stableEnds ?? []).filter(
    (end, index, ends) => end > 0 && end < text.length && end > (ends[index - 1] ?? 0),
  );
  const blocks = [0, ...cuts]
    .map((start, index) => textBlock(text.slice(start, cuts[index] ?? text.length)))
    .filter((block) => block.text !== '');
  const marked = blocks.length > 1 ? [blocks[0], blocks.at(-2)] : [blocks[0]];
  for (const block of marked) if (block) withCacheControl(block, ttl);
  return blocks;
}

/** Index (in `rest`) of the newest user message that is the user's own (carries a seq): the current tool loop follows it. */
function currentLoopStart(rest: readonly PackMessage[]): number {
  for (let index = rest.length - 1; index >= 0; index -= 1)
    if (rest[index]?.role === 'user' && rest[index]?.seq !== undefined) return index;
  return -1;
}

/**
 * The request for `messages` (the pack, leading system message first). `thinking` is sent only when every assistant
 * message of the current tool loop that called tools has its thinking blocks to send back (after a restart they are
 * gone: that call goes without thinking rather than be refused).
 */
export function toAnthropicRequest(
  messages: readonly PackMessage[],
  options: AnthropicRequestOptions,
): MessageCreateParamsNonStreaming {
  const leading = messages[0]?.role === 'system' ? messages[0] : undefined;
  const rest = leading ? messages.slice(1) : [...messages];
  const loopStart = currentLoopStart(rest);
  let thinkingComplete = true;
  const lastBlockOf = new Map<number, Block>();
  const entries: Entry[] = [];
  rest.forEach((message, index) => {
    const firstCall = message.toolCalls?.[0]?.id;
    const inLoop = index > loopStart && message.role === 'assistant' && firstCall !== undefined;
    const thinking = options.thinkingBudgetTokens !== undefined && inLoop ? options.thinkingOf?.(firstCall) : undefined;
    if (options.thinkingBudgetTokens !== undefined && inLoop && !thinking) thinkingComplete = false;
    const entry = blocksOf(message, thinking);
    const lastBlock = entry.blocks.at(-1);
    if (!lastBlock) return;
    lastBlockOf.set(index, lastBlock);
    const previous = entries.at(-1);
    if (previous && previous.role === entry.role) previous.blocks.push(...entry.blocks);
    else entries.push(entry);
  });
  pairToolBlocks(entries);
  if (entries[0]?.role !== 'user') entries.unshift({ role: 'user', blocks: [textBlock(OPENING_USER_TEXT)] });
  // Breakpoint 2: the newest window message's or held note's last block (walking back past messages that gave none).
  let newest = -1;
  for (let index = rest.length - 1; index >= 0; index -= 1)
    if ((rest[index]?.seq !== undefined || rest[index]?.held) && newest < 0) newest = index;
  for (let index = newest; index >= 0; index -= 1) {
    const block = lastBlockOf.get(index);
    if (block && block.type !== 'thinking' && block.type !== 'redacted_thinking') {
      withCacheControl(block, options.cacheTtl);
      break;
    }
  }
  const tools = (options.tools ?? []).map(toAnthropicTool);
  const lastTool = tools.at(-1);
  if (lastTool) lastTool.cache_control = { type: 'ephemeral', ttl: options.cacheTtl };
  const system = leading && leading.content.trim() !== '' ? systemBlocks(leading, options.cacheTtl) : [];
  const thinking = options.thinkingBudgetTokens !== undefined && thinkingComplete ? options.thinkingBudgetTokens : null;
  return {
    model: options.model,
    max_tokens: anthropicMaxTokens(options.maxTokens, thinking),
    ...(system.length > 0 ? { system } : {}),
    messages: entries.map((entry): MessageParam => ({ role: entry.role, content: entry.blocks })),
    ...(tools.length > 0 ? { tools } : {}),
    ...(tools.length > 0 && options.toolChoice ? { tool_choice: { type: options.toolChoice } } : {}),
    ...(thinking !== null ? { thinking: { type: 'enabled', budget_tokens: thinking } } : {}),
    ...(options.temperature !== undefined && thinking === null ? { temperature: options.temperature } : {}),
  };
}
