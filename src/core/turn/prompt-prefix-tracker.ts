import type { PackMessage } from '../context';
import type { PromptDivergence } from '../ports';

/** FNV-1a (32 bits) of a string: a compact fingerprint of one message, enough to tell two prompts apart. */
function fingerprint(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function messageFingerprint(message: PackMessage): number {
  return fingerprint(`${message.role}\u0000${message.content}\u0000${JSON.stringify(message.toolCalls ?? null)}\u0000${message.toolCallId ?? ''}`);
}

interface SeenPrompt {
  tools: number;
  messages: number[];
}

/**
 * Remembers each thread's previous chat prompt (one fingerprint per message, at most `maxThreads` threads, oldest
 * forgotten first) and tells where the next one first differs: what a provider's prompt cache could not reuse.
 * Per process: a thread's previous call made by another process is unknown (null).
 */
export class PromptPrefixTracker {
  private readonly seen = new Map<string, SeenPrompt>();

  constructor(private readonly maxThreads = 10_000) {}

  /** Compares the call's prompt with the thread's previous one and remembers it; null when there was none. */
  observe(input: { threadId: string; messages: readonly PackMessage[]; tools: readonly unknown[]; toolSchemaTokens: number }): PromptDivergence | null {
    const current: SeenPrompt = { tools: fingerprint(JSON.stringify(input.tools)), messages: input.messages.map(messageFingerprint) };
    const previous = this.seen.get(input.threadId);
    this.seen.delete(input.threadId);
    this.seen.set(input.threadId, current);
    if (this.seen.size > this.maxThreads) {
      const oldest = this.seen.keys().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
    if (!previous) return null;
    if (previous.tools !== current.tools) return { messageIndex: -1, tokensBefore: 0 };
    let index = 0;
    while (index < current.messages.length && index < previous.messages.length && current.messages[index] === previous.messages[index]) index += 1;
    const tokensBefore = input.toolSchemaTokens + input.messages.slice(0, index).reduce((sum, message) => sum + message.tokens, 0);
    return { messageIndex: index, tokensBefore };
  }
}
