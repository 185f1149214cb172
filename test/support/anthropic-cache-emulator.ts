/**
 * Anthropic's prompt cache as a Messages API stub reports it: explicit `cache_control` breakpoints (at most 4) on
 * tools, system blocks and message content blocks, in that order. An entry is written for the prefix ending at each
 * breakpoint when that prefix holds at least the model's minimum (1,024 tokens by default); it lives its `ttl` (5m or
 * 1h) and a read refreshes it. A read finds the longest written prefix ending at a breakpoint or at one of the 20 block
 * boundaries before it. Usage: `cache_read_input_tokens` (the prefix read), `cache_creation_input_tokens` (from there
 * through the last breakpoint, when written), `input_tokens` (the rest).
 *
 * Tokens are counted approximately (a quarter of the characters, at least 1 a block, plus a few per message for its
 * framing): Anthropic's tokenizer is not public, and what matters here is which prefix is reused.
 */
import { createHash } from 'node:crypto';

/** Anthropic's default minimum cacheable prefix (Sonnet and Opus 4/4.1); 4,096 for Opus 4.5 and Haiku 4.5. */
export const ANTHROPIC_CACHE_MIN_TOKENS = 1024;
/** Block boundaries before a breakpoint the cache looks back over for a hit. */
export const ANTHROPIC_CACHE_LOOKBACK_BLOCKS = 20;
export const ANTHROPIC_MAX_BREAKPOINTS = 4;
const TTL_MS = { '5m': 5 * 60_000, '1h': 60 * 60_000 } as const;
/** Per message: its role and framing. */
const MESSAGE_FRAMING_TOKENS = 3;

/** The minimum cacheable prefix of a model by Anthropic's table (Opus 4.5 and Haiku 4.5: 4,096; Haiku 3.x: 2,048). */
export function minimumCacheableTokens(model: string): number {
  if (/opus-4-5|haiku-4-5/.test(model)) return 4096;
  if (/haiku-3|3-5-haiku|3-haiku/.test(model)) return 2048;
  return ANTHROPIC_CACHE_MIN_TOKENS;
}

export interface MessagesRequestBody {
  model: string;
  max_tokens?: number;
  system?: string | { type: string; text: string; cache_control?: CacheControl }[];
  messages: { role: string; content: string | Record<string, unknown>[] }[];
  tools?: Record<string, unknown>[];
  cache_control?: CacheControl;
  [key: string]: unknown;
}

interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface CacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

interface FlatBlock {
  /** Hash of everything up to and including this block. */
  hash: string;
  /** Tokens up to and including this block. */
  end: number;
  ttl: '5m' | '1h' | null;
}

/** Approximate tokens of a text: a quarter of its characters, at least 1. */
export function approximateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function withoutCacheControl(block: Record<string, unknown>): Record<string, unknown> {
  const { cache_control: _cacheControl, ...rest } = block;
  return rest;
}

function blockTokens(block: Record<string, unknown>): number {
  if (block.type === 'text') return approximateTokens(String(block.text ?? ''));
  if (block.type === 'thinking') return approximateTokens(String(block.thinking ?? ''));
  if (block.type === 'tool_result' && typeof block.content === 'string')
    return approximateTokens(block.content) + MESSAGE_FRAMING_TOKENS;
  return approximateTokens(JSON.stringify(withoutCacheControl(block)));
}

/**
 * The request as the cache sees it: every block in order (tools, system, message blocks; with top-level
 * `cache_control`, automatic caching, the breakpoint goes on the last block), each with the hash and token count of the
 * prefix it ends, and its breakpoint's ttl.
 */
export function flattenRequest(body: MessagesRequestBody): { blocks: FlatBlock[]; total: number } {
  const blocks: FlatBlock[] = [];
  let hash = createHash('sha256').update(`model:${body.model}`).digest('hex');
  let end = 0;
  const add = (kind: string, block: Record<string, unknown>, extra = 0) => {
    hash = createHash('sha256')
      .update(hash)
      .update(kind)
      .update(JSON.stringify(withoutCacheControl(block)))
      .digest('hex');
    end += blockTokens(block) + extra;
    const control = block.cache_control as CacheControl | undefined;
    blocks.push({ hash, end, ttl: control ? (control.ttl ?? '5m') : null });
  };
  for (const tool of body.tools ?? []) add('tool', tool);
  const system = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : (body.system ?? []);
  for (const block of system) add('system', block);
  for (const message of body.messages) {
    const content = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    content.forEach((block, index) => add(index === 0 ? `<${message.role}>` : 'next', block, index === 0 ? 3 : 0));
  }
  if (body.cache_control && blocks.length > 0) blocks[blocks.length - 1]!.ttl = body.cache_control.ttl ?? '5m';
  return { blocks, total: end };
}

/** Totals over every request the emulator answered (for a benchmark's figures). */
export interface CacheTotals {
  requests: number;
  inputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
}

/** One stub's cache (Anthropic's is per organization and model; the hash starts with the model). */
export class AnthropicCacheEmulator {
  private readonly entries = new Map<string, number>();
  readonly totals: CacheTotals = {
    requests: 0,
    inputTokens: 0,
    cacheCreationInputTokens: 0,
    cacheReadInputTokens: 0,
  };

  constructor(private readonly options: { now?: () => number; minimumTokens?: (model: string) => number } = {}) {}

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** The usage of one request, writing and refreshing entries as Anthropic would. */
  use(body: MessagesRequestBody): CacheUsage {
    const now = this.now();
    const { blocks, total } = flattenRequest(body);
    const minimum = (this.options.minimumTokens ?? minimumCacheableTokens)(body.model);
    const breakpoints = blocks.flatMap((block, index) => (block.ttl ? [index] : []));
    // The longest written prefix ending at a breakpoint or within the lookback before one.
    let read = -1;
    let readTtl: '5m' | '1h' = '5m';
    for (const point of breakpoints) {
      for (let index = point; index >= Math.max(0, point - ANTHROPIC_CACHE_LOOKBACK_BLOCKS); index -= 1) {
        if (index <= read) break;
        const expires = this.entries.get(blocks[index]!.hash);
        if (expires !== undefined && expires > now) {
          read = index;
          readTtl = blocks[point]!.ttl ?? '5m';
          break;
        }
      }
    }
    const readTokens = read >= 0 ? blocks[read]!.end : 0;
    // A hit refreshes the entry's lifetime.
    if (read >= 0) this.entries.set(blocks[read]!.hash, now + TTL_MS[readTtl]);
    let written = readTokens;
    for (const point of breakpoints) {
      const block = blocks[point]!;
      if (point <= read || block.end < minimum) continue;
      this.entries.set(block.hash, now + TTL_MS[block.ttl ?? '5m']);
      written = block.end;
    }
    if (this.entries.size > 200_000) this.entries.delete(this.entries.keys().next().value!);
    const usage = {
      input_tokens: total - written,
      cache_creation_input_tokens: written - readTokens,
      cache_read_input_tokens: readTokens,
    };
    this.totals.requests += 1;
    this.totals.inputTokens += usage.input_tokens;
    this.totals.cacheCreationInputTokens += usage.cache_creation_input_tokens;
    this.totals.cacheReadInputTokens += usage.cache_read_input_tokens;
    return usage;
  }

  /** Forgets every entry and zeroes the totals. */
  clear(): void {
    this.entries.clear();
    Object.assign(this.totals, { requests: 0, inputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 });
  }
}
