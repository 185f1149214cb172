import type { StubRequestBody, StubResponder } from './openai-stub';
import { echoResponder, replyWithText } from './openai-stub';
import { wireContentText } from '../../src/llm/count-chat-tokens';

/** Summarizer calls carry our summarizer system prompts ("running summary"); chat calls don't. */
export function classifyRequest(body: StubRequestBody): string {
  const first = body.messages[0];
  return first?.role === 'system' && /running summary/.test(wireContentText(first.content)) ? 'summary' : 'chat';
}

/**
 * A summarizer that keeps every CODE-n identifier and the cited range: enough for tests to check that
 * what was folded reached the summary and the next packs.
 */
export function summaryResponder(options: { chat?: StubResponder; delayMs?: number } = {}): StubResponder {
  return (request) => {
    if (request.kind !== 'summary') return (options.chat ?? echoResponder)(request);
    const text = request.body.messages.map((message) => wireContentText(message.content)).join('\n');
    const codes = [...new Set(text.match(/CODE-\d+/g) ?? [])];
    const range = /New messages \(#(\d+) to #(\d+)\)/.exec(text);
    const cite = range ? ` [#${range[1]}–${range[2]}]` : '';
    return replyWithText(`Intent: testing long chats.${cite} Identifiers: ${codes.join(', ') || 'none'}.`, options.delayMs ? { firstByteDelayMs: options.delayMs } : {});
  };
}

/**
 * `summaryResponder` whose summarizer calls can be held: while `hold()` is in force they wait, so a test can
 * observe the state before a fold or rebuild commits; `release()` lets them (and later ones) through.
 */
export function heldSummaryResponder(options: Parameters<typeof summaryResponder>[0] = {}): { responder: StubResponder; hold(): void; release(): void } {
  const summaries = summaryResponder(options);
  let gate: { promise: Promise<void>; open: () => void } | null = null;
  return {
    responder: async (request) => {
      if (request.kind === 'summary' && gate) await gate.promise;
      return summaries(request);
    },
    hold() {
      let open = () => {};
      const promise = new Promise<void>((resolve) => { open = resolve; });
      gate = { promise, open };
    },
    release() {
      gate?.open();
      gate = null;
    },
  };
}
