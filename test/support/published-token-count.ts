/**
 * The test stub's own count of a chat request's prompt tokens, written from OpenAI's published rules (the "How to
 * count tokens with tiktoken" cookbook: `num_tokens_from_messages` and `num_tokens_for_tools`) on js-tiktoken
 * directly, and checked against the counts that cookbook reports from the API (published-token-count.unit.test.ts).
 * It shares no code with the product's counters, so a wrong formula there shows up as a gap against the stub's
 * reported `prompt_tokens` instead of agreeing with itself.
 */
import { Tiktoken } from 'js-tiktoken/lite';
import cl100kBase from 'js-tiktoken/ranks/cl100k_base';
import o200kBase from 'js-tiktoken/ranks/o200k_base';

interface Message {
  role: string;
  content?: string | Array<{ type: string; text?: string }> | null;
  name?: string;
  tool_calls?: Array<{ function?: { name?: string; arguments?: string } }>;
  tool_call_id?: string;
}

interface Tool {
  function: {
    name: string;
    description?: string;
    parameters?: { properties?: Record<string, { type?: unknown; description?: string; enum?: unknown[] }> };
  };
}

interface Encoding {
  encoder: Tiktoken;
  /** The encoding's pre-tokenizer: tiktoken encodes each piece it matches on its own. */
  pattern: RegExp;
  /** Token count of each piece seen, so a prompt's count costs a lookup per piece once its words are known. */
  pieces: Map<string, number>;
}

const encodings: Record<string, Encoding> = {};
/** Pieces remembered per encoding; the cache starts over beyond it (a bound on the memory, not a tuning knob). */
const MAX_PIECES = 200_000;

function encodingFor(model: string): Encoding {
  // The cookbook: gpt-4o and later use o200k_base; gpt-4 and gpt-3.5-turbo cl100k_base.
  const ranks = /^(gpt-4|gpt-3\.5)(?!o|\.[15])/.test(model) ? cl100kBase : o200kBase;
  const name = ranks === cl100kBase ? 'cl100k' : 'o200k';
  encodings[name] ??= { encoder: new Tiktoken(ranks), pattern: new RegExp(ranks.pat_str, 'ug'), pieces: new Map() };
  return encodings[name];
}

/**
 * A piece's tokens; pieces past 256 characters (hostile input: 32,000 letters are one piece) in 64-character slices,
 * since js-tiktoken's merge is quadratic in a piece and the stub shares the test's process. The product counts such
 * pieces its own way (src/core/context/token-counter.ts); this stays independent of it.
 */
export function encodeInSlices(encoder: Tiktoken, piece: string): number {
  if (piece.length <= 256) return encoder.encode(piece, [], []).length;
  let tokens = 0;
  for (let start = 0; start < piece.length; start += 64)
    tokens += encoder.encode(piece.slice(start, start + 64), [], []).length;
  return tokens;
}

/**
 * `encode(text).length` with no special tokens allowed or refused, as a sum over the pre-tokenizer's pieces (exactly
 * what js-tiktoken's encode does then: each piece is byte-pair encoded on its own), remembering each piece's count:
 * a model stub counting every prompt of a long benchmark was spending most of its time re-encoding the same words.
 */
function countTokens(model: string, text: string): number {
  const { encoder, pattern, pieces } = encodingFor(model);
  if (pieces.size > MAX_PIECES) pieces.clear();
  let tokens = 0;
  for (const [piece] of text.matchAll(pattern)) {
    let count = pieces.get(piece);
    if (count === undefined) {
      count = encodeInSlices(encoder, piece);
      pieces.set(piece, count);
    }
    tokens += count;
  }
  return tokens;
}

function textOf(content: Message['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => part.text ?? '').join('');
}

/**
 * `num_tokens_from_messages`: 3 per message, every value of the message encoded (role, content, name), 1 more for a
 * name, 3 for the reply priming. Tool calls of assistant messages (not in the cookbook): their name and arguments.
 */
function countMessages(model: string, messages: readonly Message[]): number {
  const encode = (text: string) => countTokens(model, text);
  let tokens = 3;
  for (const message of messages) {
    tokens += 3 + encode(message.role) + encode(textOf(message.content));
    if (message.name !== undefined) tokens += 1 + encode(message.name);
    if (message.tool_call_id !== undefined) tokens += encode(message.tool_call_id);
    for (const call of message.tool_calls ?? [])
      tokens += 3 + encode(call.function?.name ?? '') + encode(call.function?.arguments ?? '');
  }
  return tokens;
}

/** `num_tokens_for_tools` with the cookbook's constants for the gpt-4o family (the prompt cache emulator counts the tool list by it too). */
export function countTools(model: string, tools: readonly Tool[]): number {
  if (tools.length === 0) return 0;
  const encode = (text: string) => countTokens(model, text);
  let tokens = 0;
  for (const { function: fn } of tools) {
    tokens += 7 + encode(`${fn.name}:${(fn.description ?? '').replace(/\.$/, '')}`);
    const properties = fn.parameters?.properties ?? {};
    if (Object.keys(properties).length > 0) tokens += 3;
    for (const [key, property] of Object.entries(properties)) {
      tokens += 3;
      if (Array.isArray(property.enum)) {
        tokens -= 3;
        for (const item of property.enum) tokens += 3 + encode(String(item));
      }
      tokens += encode(
        `${key}:${String(property.type ?? 'object')}:${(property.description ?? '').replace(/\.$/, '')}`,
      );
    }
  }
  return tokens + 12;
}

/** Prompt tokens of a chat completions request as the published rules count them. */
export function publishedPromptTokens(request: {
  model: string;
  messages: readonly Message[];
  tools?: readonly Tool[];
}): number {
  return countMessages(request.model, request.messages) + countTools(request.model, request.tools ?? []);
}
