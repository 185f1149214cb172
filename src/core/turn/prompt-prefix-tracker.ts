import type { PackMessage } from '../context';
import type { PromptDivergence, PromptFingerprints } from '../ports';

/**
 * FNV-1a (32 bits) of a string: a compact fingerprint of one message, enough to tell two prompts apart. Signed, as a
 * Postgres integer stores it (model_calls.prompt_fingerprints).
 */
function fingerprint(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

function messageFingerprint(message: PackMessage): number {
  return fingerprint(
    `${message.role}\u0000${message.content}\u0000${JSON.stringify(message.toolCalls ?? null)}\u0000${message.toolCallId ?? ''}`,
  );
}

/** The fingerprints of one chat prompt: its tool list's and each message's. */
export function promptFingerprints(messages: readonly PackMessage[], tools: readonly unknown[]): PromptFingerprints {
  return { tools: fingerprint(JSON.stringify(tools)), messages: messages.map(messageFingerprint) };
}

/**
 * Remembers each thread's previous chat prompt (one fingerprint per message, at most `maxThreads` threads, oldest
 * forgotten first) and tells where the next one first differs: what a provider's prompt cache could not reuse.
 * A thread this process has not seen (its previous call made by another process, or before a restart) is compared
 * with the stored fingerprints of its newest recorded call, when the caller has them.
 */
export class PromptPrefixTracker {
  private readonly seen = new Map<string, PromptFingerprints>();

  constructor(private readonly maxThreads = 10_000) {}

  /**
   * Compares the call's prompt with the thread's previous one and remembers it; the divergence is null when there was
   * none. `stored`: the fingerprints recorded with the thread's newest call, used when this process has seen none.
   */
  observe(input: {
    threadId: string;
    messages: readonly PackMessage[];
    tools: readonly unknown[];
    toolSchemaTokens: number;
    stored?: PromptFingerprints | null;
  }): { divergence: PromptDivergence | null; fingerprints: PromptFingerprints } {
    const current = promptFingerprints(input.messages, input.tools);
    const previous = this.seen.get(input.threadId) ?? input.stored ?? undefined;
    this.seen.delete(input.threadId);
    this.seen.set(input.threadId, current);
    if (this.seen.size > this.maxThreads) {
      const oldest = this.seen.keys().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
    if (!previous) return { divergence: null, fingerprints: current };
    if (previous.tools !== current.tools)
      return { divergence: { messageIndex: -1, tokensBefore: 0 }, fingerprints: current };
    let index = 0;
    while (
      index < current.messages.length &&
      index < previous.messages.length &&
      current.messages[index] === previous.messages[index]
    )
      index += 1;
    const tokensBefore =
      input.toolSchemaTokens + input.messages.slice(0, index).reduce((sum, message) => sum + message.tokens, 0);
    return { divergence: { messageIndex: index, tokensBefore }, fingerprints: current };
  }
}
