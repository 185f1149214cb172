/**
 * OpenAI's automatic prompt caching as the test stub reports it (`usage.prompt_tokens_details.cached_tokens`): a
 * prompt's longest prefix shared with an earlier prompt to the same model counts, when both are at least 1,024 tokens,
 * in 128-token steps. The prompt is read as the provider's template would render it (tool schemas, then each message
 * in order) and split by the encoding's pre-tokenizer; a prefix is remembered at every 128-token step from 1,024 on by
 * a hash of every piece up to and including the one that reaches the step (so a prefix counts only when it matches
 * through that step). Its own tokenizing, independent of the product's counters. Positions are counted in the units
 * the stub reports `prompt_tokens` in (published-token-count.ts): the tool list by the published rule, each message's
 * framing as 3 tokens plus its role, tool calls as 3 plus name and arguments; the markup that only marks boundaries
 * for the hash costs nothing. (Counting the markup's own text made a prompt ~25% longer than its `prompt_tokens`, so
 * a changed tail shorter than that surplus was reported as cached.)
 */
import { Tiktoken } from 'js-tiktoken/lite';
import o200kBase from 'js-tiktoken/ranks/o200k_base';
import { countTools, encodeInSlices } from './published-token-count';

/** OpenAI's minimum cacheable prompt and the steps hits are counted in. */
export const CACHE_MIN_TOKENS = 1024;
export const CACHE_STEP_TOKENS = 128;

interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: unknown;
  tool_call_id?: string;
  name?: string;
}

/** A part of the rendered prompt: split into pieces and counted, or (`tokens` given) hashed whole at that cost. */
interface Part {
  text: string;
  tokens?: number;
}

const encoder = new Tiktoken(o200kBase);
const pattern = new RegExp(o200kBase.pat_str, 'ug');
const pieceTokens = new Map<string, number>();

function tokensOf(piece: string): number {
  let count = pieceTokens.get(piece);
  if (count === undefined) {
    if (pieceTokens.size > 200_000) pieceTokens.clear();
    count = encodeInSlices(encoder, piece);
    pieceTokens.set(piece, count);
  }
  return count;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part: { text?: string }) => part.text ?? '').join('');
  return '';
}

function textTokens(text: string): number {
  let tokens = 0;
  for (const [piece] of text.matchAll(pattern)) tokens += tokensOf(piece);
  return tokens;
}

/** The parts of a prompt in the order a template renders them, each costing what the published count charges for it. */
function renderedParts(body: { model: string; tools?: unknown; messages: readonly WireMessage[] }): Part[] {
  const tools = Array.isArray(body.tools) ? (body.tools as Parameters<typeof countTools>[1]) : [];
  // The reply priming (3) is counted first so that the positions add up to `prompt_tokens`.
  const parts: Part[] = [
    { text: '<|priming|>', tokens: 3 },
    { text: `<tools>${JSON.stringify(body.tools ?? [])}</tools>`, tokens: countTools(body.model, tools) },
  ];
  for (const message of body.messages) {
    const name = message.name !== undefined ? 1 + textTokens(message.name) : 0;
    parts.push({
      text: `<|start|>${message.role}${message.name !== undefined ? `:${message.name}` : ''}<|message|>`,
      tokens: 3 + textTokens(message.role) + name,
    });
    parts.push({ text: textOf(message.content) });
    if (Array.isArray(message.tool_calls)) {
      const calls = message.tool_calls as { function?: { name?: string; arguments?: string } }[];
      parts.push({
        text: JSON.stringify(calls),
        tokens: calls.reduce(
          (sum, call) => sum + 3 + textTokens(call.function?.name ?? '') + textTokens(call.function?.arguments ?? ''),
          0,
        ),
      });
    }
    if (message.tool_call_id !== undefined) parts.push({ text: message.tool_call_id });
    parts.push({ text: '<|end|>', tokens: 0 });
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
    const add = (piece: string, pieceTokens: number): void => {
      hash = extend(hash, piece);
      tokens += pieceTokens;
      while (tokens >= nextStep) {
        const key = `${hash[0]}:${hash[1]}:${nextStep}`;
        if (stillMatching && this.prefixes.has(key)) cached = nextStep;
        else stillMatching = false;
        seen.push(key);
        nextStep += CACHE_STEP_TOKENS;
      }
    };
    for (const part of renderedParts(body)) {
      if (part.tokens !== undefined) add(part.text, part.tokens);
      else for (const [piece] of part.text.matchAll(pattern)) add(piece, tokensOf(piece));
    }
    for (const key of seen) this.prefixes.add(key);
    return cached;
  }

  clear(): void {
    this.prefixes.clear();
  }
}
