import type { StubRequestBody, StubResponder } from './openai-stub';
import { echoResponder, replyWithText } from './openai-stub';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import { FOLD_TASK_OPENING } from '../../src/core/summary/continued-fold-prompt';

/**
 * Summarizer calls carry our summarizer system prompts ("running summary"), or continue the chat's prompt with a
 * fold task as the last message (FOLD_PROMPT=auto); chat calls do neither.
 */
export function classifyRequest(body: StubRequestBody): string {
  const first = body.messages[0];
  if (first?.role === 'system' && /running summary/.test(wireContentText(first.content))) return 'summary';
  return isContinuedFold(body) ? 'summary' : 'chat';
}

/** Whether the request is a fold continuing the chat's prompt (its last message is the fold task). */
export function isContinuedFold(body: StubRequestBody): boolean {
  const last = body.messages.at(-1);
  return last?.role === 'user' && wireContentText(last.content).startsWith(FOLD_TASK_OPENING);
}

/**
 * The text a summarizer call is asked to summarize: a stand-alone prompt's messages; a continued fold's folded
 * messages (the task's count of them, from the first message opening as its first landmark), with the task, not the
 * kept window after them.
 */
export function summarizedText(body: StubRequestBody): string {
  const texts = body.messages.map((message) => wireContentText(message.content));
  if (!isContinuedFold(body)) return texts.join('\n');
  const task = texts.at(-1) ?? '';
  const opening = (/^#\d+ \w+: «(.*)»/m.exec(task)?.[1] ?? '').replace(/…$/, '');
  const count = Number(/are the oldest (\d+) of the conversation/.exec(task)?.[1] ?? 0);
  const from = texts.findIndex((text, index) => index > 0 && text.replace(/\s+/g, ' ').trim().startsWith(opening));
  return [...(from >= 0 ? texts.slice(from, from + count) : []), task].join('\n');
}

/**
 * A summarizer that keeps every CODE-n identifier and the cited range: enough for tests to check that
 * what was folded reached the summary and the next packs.
 */
export function summaryResponder(options: { chat?: StubResponder; delayMs?: number } = {}): StubResponder {
  return (request) => {
    if (request.kind !== 'summary') return (options.chat ?? echoResponder)(request);
    const text = summarizedText(request.body);
    const codes = [...new Set(text.match(/CODE-\d+/g) ?? [])];
    const range = /(?:New messages|The messages to fold) \(#(\d+) to #(\d+)\)/.exec(text);
    const cite = range ? ` [#${range[1]}–${range[2]}]` : '';
    return replyWithText(
      `Intent: testing long chats.${cite} Identifiers: ${codes.join(', ') || 'none'}.`,
      options.delayMs ? { firstByteDelayMs: options.delayMs } : {},
    );
  };
}

/**
 * `summaryResponder` whose summarizer calls can be held: while `hold()` is in force they wait, so a test can
 * observe the state before a fold or rebuild commits; `release()` lets them (and later ones) through.
 */
export function heldSummaryResponder(options: Parameters<typeof summaryResponder>[0] = {}): {
  responder: StubResponder;
  hold(): void;
  release(): void;
} {
  const summaries = summaryResponder(options);
  let gate: { promise: Promise<void>; open: () => void } | null = null;
  return {
    responder: async (request) => {
      if (request.kind === 'summary' && gate) await gate.promise;
      return summaries(request);
    },
    hold() {
      let open = () => {};
      const promise = new Promise<void>((resolve) => {
        open = resolve;
      });
      gate = { promise, open };
    },
    release() {
      gate?.open();
      gate = null;
    },
  };
}
