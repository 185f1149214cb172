import { Tiktoken } from 'js-tiktoken/lite';
import cl100kBase from 'js-tiktoken/ranks/cl100k_base';
import o200kBase from 'js-tiktoken/ranks/o200k_base';
import { bytePairTokenCount, type RankLookup } from './byte-pair-count';
import { createTextTokenCache } from './text-token-cache';
import type { EncodingName, Role, ToolCall } from './types';

/** A message as OpenAI counts it. `name` is the optional participant name of the Chat Completions API. */
export interface CountableMessage {
  role: Role;
  content: string;
  name?: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
}

/** One property of a function's JSON-schema parameters (the parts the token approximation reads). */
export interface ToolParameterSchema {
  type?: string | string[];
  description?: string;
  enum?: unknown[];
}

/** A function tool definition, bare or wrapped as OpenAI's `{ type: 'function', function }`. */
export interface FunctionSchema {
  name: string;
  description?: string;
  parameters?: { properties?: Record<string, ToolParameterSchema> };
}
export type ToolDefinition = FunctionSchema | { type: 'function'; function: FunctionSchema };

/** Counts tokens the way OpenAI's Chat Completions API bills prompt tokens. */
export interface TokenCounter {
  encoding: EncodingName;
  /** Tokens of a bare string. Special-token text such as `<|endoftext|>` is counted as ordinary text. */
  countText(text: string): number;
  /** Tokens of one message including its per-message overhead: what a ContextEntry stores. */
  countMessage(message: CountableMessage): number;
  /** Tokens of a whole prompt: the messages plus the 3 tokens that prime the reply. */
  countPack(messages: readonly CountableMessage[]): number;
  /** Tokens of the tool definitions sent with a request (OpenAI cookbook approximation); 0 for none. */
  countToolSchemas(tools: readonly ToolDefinition[]): number;
}

/** Every message is rendered `<|start|>{role/name}\n{content}<|end|>\n`. */
export const TOKENS_PER_MESSAGE = 3;
/** A `name` field costs one token more than its text. */
export const TOKENS_PER_NAME = 1;
/** Every reply is primed with `<|start|>assistant<|message|>`. */
export const REPLY_PRIMING_TOKENS = 3;
/**
 * Per tool call on an assistant message, on top of its name and JSON arguments. OpenAI does not document how
 * tool calls are rendered; this is an approximation, not covered by the 2% guarantee for text-only messages.
 */
export const TOKENS_PER_TOOL_CALL = 3;

const RANKS = { o200k_base: o200kBase, cl100k_base: cl100kBase } as const;
// Building an encoder parses its ranks (o200k ~0.4-0.8 s quiet, seconds on a busy machine): once per encoding per
// process, on first use.
const encoders = new Map<EncodingName, Tiktoken>();

/**
 * The process's encoder for an encoding, shared by every counter (the context engine's and the wire counter of the
 * offline model and the test stub, src/llm/count-chat-tokens.ts): its ranks are parsed once per process, not once
 * per user of them.
 */
export function encoderFor(encoding: EncodingName): Tiktoken {
  let encoder = encoders.get(encoding);
  if (!encoder) {
    encoder = new Tiktoken(RANKS[encoding]);
    encoders.set(encoding, encoder);
  }
  return encoder;
}

// OpenAI cookbook `num_tokens_for_tools` constants; only the per-function start differs by encoding.
const TOOL_SCHEMA_TOKENS = {
  o200k_base: { functionStart: 7 },
  cl100k_base: { functionStart: 10 },
} as const;
const PROPERTIES_START = 3;
const PER_PROPERTY = 3;
const ENUM_START = -3;
const PER_ENUM_ITEM = 3;
const TOOLS_END = 12;

function unwrap(tool: ToolDefinition): FunctionSchema {
  return 'function' in tool ? tool.function : tool;
}

function withoutFinalPeriod(text: string): string {
  return text.endsWith('.') ? text.slice(0, -1) : text;
}

/**
 * Token counts of the texts measured lately, shared by every counter of the process and keyed by content and
 * encoding: each turn measures the same texts again (the system prefix, with the summary, three times; the tool
 * schemas; the role names; the omitted-messages note), so each is encoded once. Bounded: 4,096 texts, 2 million
 * characters in all (about 4 MB), texts over 32,768 characters never remembered.
 */
export const TOKEN_COUNT_CACHE_BOUNDS = { maxEntries: 4096, maxChars: 2_000_000, maxTextChars: 32_768 } as const;
const textTokens = createTextTokenCache(TOKEN_COUNT_CACHE_BOUNDS);

/**
 * What this process asked of the tokenizer since it started: `calls` (texts counted, remembered or not), `encoded`
 * (texts byte-pair encoded: not remembered) and their `chars`; then what reached js-tiktoken's encoder or our merge
 * (`encoderCalls`, `encoderChars`) and the longest single input it was handed (`longestEncoderInput`). Plain
 * counters: the per-turn work-budget test reads the first three, the hostile-input suite the longest input (a text's
 * cost is bounded by counting work, not by the clock).
 */
export const tokenizerWork = {
  calls: 0,
  encoded: 0,
  chars: 0,
  encoderCalls: 0,
  encoderChars: 0,
  longestEncoderInput: 0,
};

/**
 * Texts and characters the shared token-count cache holds now, against {@link TOKEN_COUNT_CACHE_BOUNDS}
 * (diagnostics: the benchmark's heap-growth figure is measured once this cache is full).
 */
export function tokenCountCacheSize(): { entries: number; chars: number } {
  return textTokens.size();
}

/**
 * Token counts of the pieces the encodings' pre-tokenizers split text into (words with their leading space,
 * punctuation runs, 1–3 digit groups, ...), per encoding. tiktoken byte-pair encodes each piece on its own, so a
 * text's count is the sum of its pieces' counts, and a new text is mostly made of pieces seen before. Bounded: pieces
 * of at most 64 characters, 100,000 per encoding (then it starts over), a few MB.
 */
const MAX_PIECE_CHARS = 64;
const MAX_PIECES = 100_000;
const pieceTokens = new Map<EncodingName, PieceCounts>();

/** One encoding's pre-tokenizer and what it remembers: counts of short pieces, and of long pieces' chunks. */
interface PieceCounts {
  pattern: RegExp;
  counts: Map<string, number>;
  /** Counts of the chunks of long pieces seen lately (a long run is mostly one chunk again and again). */
  chunks: Map<string, number>;
}

/**
 * The longest run of one piece handed to the encoder at once. js-tiktoken's byte-pair merge is quadratic in the
 * length of a piece, and one run of letters, of `_` or of punctuation is one piece whatever its length: 32,000
 * letters took 96 s to encode whole. Longer pieces are encoded in chunks of this size, which keeps counting linear
 * in the text's length, and every piece goes through our own O(n log n) merge (byte-pair-count.ts), so a
 * 256-character chunk costs a fraction of a millisecond whatever its characters. A chunk boundary can only stop a
 * merge across it, so the count may grow a little for such pieces, never shrink: the budget guard stays safe.
 */
export const MAX_ENCODED_PIECE_CHARS = 256;

/** js-tiktoken's vocabulary, keyed by the bytes joined with `,` (its own field; the version is pinned exactly). */
function rankLookupOf(encoder: Tiktoken): RankLookup {
  const ranks = (encoder as unknown as { rankMap?: Map<string, number> }).rankMap;
  if (!(ranks instanceof Map)) throw new Error('js-tiktoken no longer exposes rankMap: check its version');
  return (key) => ranks.get(key);
}
const rankLookups = new WeakMap<Tiktoken, RankLookup>();
const utf8 = new TextEncoder();

function encodeChunk(encoder: Tiktoken, chunk: string): number {
  tokenizerWork.encoderCalls += 1;
  tokenizerWork.encoderChars += chunk.length;
  if (chunk.length > tokenizerWork.longestEncoderInput) tokenizerWork.longestEncoderInput = chunk.length;
  // Every piece through our own merge (the same merges as js-tiktoken's, in O(n log n)), short ones too: js-tiktoken's
  // `encode` compiles its pre-tokenizer and special-token regexes anew on each call, which made 32,000 characters of
  // random Unicode (10,000 distinct short pieces) cost 250–450 ms of one blocked event loop; now 70–260 ms.
  let rankOf = rankLookups.get(encoder);
  if (!rankOf) {
    rankOf = rankLookupOf(encoder);
    rankLookups.set(encoder, rankOf);
  }
  const bytes = utf8.encode(chunk);
  return rankOf(bytes.join(',')) !== undefined ? 1 : bytePairTokenCount(bytes, rankOf);
}

/** Long pieces' chunks remembered per encoding: 2,048 of at most 256 characters (about 1 MB), then it starts over. */
const MAX_CHUNKS = 2048;

function encodeLongPieceChunk(encoder: Tiktoken, chunks: Map<string, number>, chunk: string): number {
  let count = chunks.get(chunk);
  if (count === undefined) {
    if (chunks.size >= MAX_CHUNKS) chunks.clear();
    count = encodeChunk(encoder, chunk);
    chunks.set(chunk, count);
  }
  return count;
}

/** Tokens of one pre-tokenizer piece, in chunks of at most {@link MAX_ENCODED_PIECE_CHARS} characters. */
function encodePiece(encoder: Tiktoken, chunks: Map<string, number>, piece: string): number {
  if (piece.length <= MAX_ENCODED_PIECE_CHARS) return encodeChunk(encoder, piece);
  let tokens = 0;
  let start = 0;
  while (start < piece.length) {
    let end = Math.min(start + MAX_ENCODED_PIECE_CHARS, piece.length);
    // Never split a surrogate pair: the halves would each encode as a replacement character.
    if (end < piece.length && isHighSurrogate(piece.charCodeAt(end - 1))) end -= 1;
    tokens += encodeLongPieceChunk(encoder, chunks, piece.slice(start, end));
    start = end;
  }
  return tokens;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * `encode(text, [], []).length` (no special tokens allowed or refused) in time linear in the text's length: the sum
 * of its pieces' counts, remembered per piece, with long pieces encoded in chunks. Every count of text in the
 * process goes through here (the context engine's counter, and the wire counter of the offline model and the test
 * stub in src/llm/count-chat-tokens.ts).
 */
export function boundedEncodedLength(encoding: EncodingName, text: string): number {
  tokenizerWork.encoded += 1;
  tokenizerWork.chars += text.length;
  let pieces = pieceTokens.get(encoding);
  if (!pieces) {
    pieces = { pattern: new RegExp(RANKS[encoding].pat_str, 'ug'), counts: new Map(), chunks: new Map() };
    pieceTokens.set(encoding, pieces);
  }
  const { pattern, counts, chunks } = pieces;
  if (counts.size > MAX_PIECES) counts.clear();
  const encoder = encoderFor(encoding);
  let tokens = 0;
  for (const [piece] of text.matchAll(pattern)) {
    let count = counts.get(piece);
    if (count === undefined) {
      count = encodePiece(encoder, chunks, piece);
      if (piece.length <= MAX_PIECE_CHARS) counts.set(piece, count);
    }
    tokens += count;
  }
  return tokens;
}

/** A token counter for one encoding. The encoder is built lazily and shared by all counters of that encoding. */
export function createTokenCounter(encoding: EncodingName): TokenCounter {
  // Disallow no special tokens: user text containing `<|endoftext|>` is plain text to the API too.
  const encodeLength = (text: string): number => boundedEncodedLength(encoding, text);
  const countText = (text: string): number => {
    tokenizerWork.calls += 1;
    return text === '' ? 0 : textTokens.count(encoding, text, encodeLength);
  };

  const countMessage = (message: CountableMessage): number => {
    let tokens = TOKENS_PER_MESSAGE + countText(message.role) + countText(message.content);
    if (message.name !== undefined) tokens += TOKENS_PER_NAME + countText(message.name);
    for (const call of message.toolCalls ?? []) {
      tokens += TOKENS_PER_TOOL_CALL + countText(call.name) + countText(JSON.stringify(call.args));
    }
    return tokens;
  };

  const countSchema = (schema: FunctionSchema): number => {
    let tokens = TOOL_SCHEMA_TOKENS[encoding].functionStart;
    tokens += countText(`${schema.name}:${withoutFinalPeriod(schema.description ?? '')}`);
    const properties = Object.entries(schema.parameters?.properties ?? {});
    if (properties.length > 0) tokens += PROPERTIES_START;
    for (const [key, property] of properties) {
      tokens += PER_PROPERTY;
      if (property.enum) {
        tokens += ENUM_START;
        for (const item of property.enum) tokens += PER_ENUM_ITEM + countText(String(item));
      }
      const type = Array.isArray(property.type) ? property.type.join('|') : (property.type ?? '');
      tokens += countText(`${key}:${type}:${withoutFinalPeriod(property.description ?? '')}`);
    }
    return tokens;
  };

  return {
    encoding,
    countText,
    countMessage,
    countPack: (messages) => messages.reduce((sum, message) => sum + countMessage(message), REPLY_PRIMING_TOKENS),
    countToolSchemas: (tools) =>
      tools.length === 0 ? 0 : tools.reduce((sum, tool) => sum + countSchema(unwrap(tool)), TOOLS_END),
  };
}
