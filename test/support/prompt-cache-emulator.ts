/**
 * OpenAI's automatic prompt caching as the test stub reports it (`usage.prompt_tokens_details.cached_tokens`): a
 * prompt's longest prefix shared with an earlier prompt to the same model counts, when both are at least 1,024 tokens,
 * in 128-token steps. The prompt is read as the provider's template would render it (tool schemas, then each message
 * in order) and split by the encoding's pre-tokenizer; a prefix is remembered at every 128-token step from 1,024 on by
 * a hash of every piece up to and including the one that reaches the step (so a prefix counts only when it matches
 * through that step). Its own tokenizing, independent of the product's counters.
 */
import { Tiktoken } from 'js-tiktoken/lite';
import o200kBase from 'js-tiktoken/ranks/o200k_base';

/** OpenAI's minimum cacheable prompt and the steps hits are counted in. */
export const CACHE_MIN_TOKENS = 1024;
export const CACHE_STEP_TOKENS = 128;

interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: unknown;
  tool_call_id?: string;
}

const encoder = new Tiktoken(o200kBase);
const pattern = new RegExp(o200kBase.pat_str, 'ug');
const pieceTokens = new Map<string, number>();

function tokensOf(piece: string): number {
  let count = pieceTokens.get(piece);
  if (count === undefined) {
    if (pieceTokens.size > 200_000) pieceTokens.clear();
    count = encoder.encode(piece, [], []).length;
    pieceTokens.set(piece, count);
  }
  return count;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part: { text?: string }) => part.text ?? '').join('');
  return '';
}

/** The parts of a prompt in the order a template renders them. */
function renderedParts(body: { tools?: unknown; messages: readonly WireMessage[] }): string[] {
  const parts = [`<tools>${JSON.stringify(body.tools ?? [])}</tools>`];
  for (const message of body.messages) {
    parts.push(`<|start|>${message.role}<|message|>`, textOf(message.content));
    if (message.tool_calls !== undefined) parts.push(JSON.stringify(message.tool_calls));
    if (message.tool_call_id !== undefined) parts.push(message.tool_call_id);
    parts.push('<|end|>');
  }
  return parts;
}

/** Two FNV-1a lanes over the pieces so far: a key for "every piece up to here". */
function extend(hash: [number, number], piece: string): [number, number] {
  let [a, b] = hash;
  for (let index = 0; index < piece.length; index += 1) {
    const code = piece.charCodeAt(index);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x5bd1e995);
  }
  a = Math.imul(a ^ 0xff, 0x01000193);
  return [a >>> 0, b >>> 0];
}

/** Remembers the prompts it was shown and answers how many tokens of each a cache would have served. */
export class PromptCacheEmulator {
  private readonly prefixes = new Set<string>();

  /** The cached tokens of this prompt (0 below 1,024 or without a shared step), then remembers its prefixes. */
  observe(body: { model: string; tools?: unknown; messages: readonly WireMessage[] }): number {
    let hash = extend([0x811c9dc5, 0x9747b28c], body.model);
    let tokens = 0;
    let nextStep = CACHE_MIN_TOKENS;
    let cached = 0;
    let stillMatching = true;
    const seen: string[] = [];
    for (const part of renderedParts(body)) {
      for (const [piece] of part.matchAll(pattern)) {
        hash = extend(hash, piece);
        tokens += tokensOf(piece);
        while (tokens >= nextStep) {
          const key = `${hash[0]}:${hash[1]}:${nextStep}`;
          if (stillMatching && this.prefixes.has(key)) cached = nextStep;
          else stillMatching = false;
          seen.push(key);
          nextStep += CACHE_STEP_TOKENS;
        }
      }
    }
    for (const key of seen) this.prefixes.add(key);
    return cached;
  }

  clear(): void {
    this.prefixes.clear();
  }
}
