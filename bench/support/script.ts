import { wireContentText } from '../../src/llm/count-chat-tokens';
import { lastUserText, replyWithText, type StubRequestBody, type StubResponder } from '../../test/support/openai-stub';
import { classifyRequest as classifyOurs } from '../../test/support/summary-stub';

/** The scripted conversation both products run: turn k mentions one identifier the summary must keep. */
const TOPICS = [
  'the migration plan for the billing service and its rollback steps',
  'which dashboards the support team needs before the launch',
  'how the nightly export should handle customers in other time zones',
  'the open questions about data retention for deleted accounts',
  'what the load test showed about the search endpoint latency',
];

export function scriptedMessage(turn: number): string {
  return `Turn ${turn}: please note CODE-${1000 + turn} for ${TOPICS[turn % TOPICS.length]}; what should we check next?`;
}

/** Summary requests of either product: ours ("running summary" system prompt) and LangChain's. */
export function classifyBoth(body: StubRequestBody): string {
  if (classifyOurs(body) === 'summary') return 'summary';
  const first = body.messages[0];
  return first && /Context Extraction Assistant/.test(wireContentText(first.content)) ? 'summary' : 'chat';
}

/**
 * Chat: a short answer naming the turn's identifier, in one chunk. Summaries (after `delayMs`): a bounded summary that keeps
 * the identifiers of the newly folded messages (those after the last "New messages" heading, or all for
 * LangChain's prompt, which carries its previous summary as a message: the latest 64), citing the range when asked.
 */
export function scriptedResponder(options: { summaryDelayMs: number }): StubResponder {
  return (request) => {
    if (request.kind !== 'summary') {
      const code = /CODE-\d+/.exec(lastUserText(request.body))?.[0] ?? 'nothing new';
      const answer = `Noted ${code}. Next, check the owners, the deadline and the test results for this item.`;
      return replyWithText(answer, { chunks: [answer] });
    }
    const text = request.body.messages.map((message) => wireContentText(message.content)).join('\n');
    const newPart = text.split(/New messages \(#/).at(-1) ?? text;
    const codes = [...new Set(newPart.match(/CODE-\d+/g) ?? [])].slice(-64);
    const range = /New messages \(#(\d+) to #(\d+)\)/.exec(text);
    const cite = range ? ` [#${range[1]}–${range[2]}]` : '';
    const summary = `Intent: the user logs project notes and asks what to check next.${cite} Identifiers: ${codes.join(', ') || 'none'}.`;
    // One chunk: the stub streams word by word otherwise, which is the stub's time, not ours.
    return replyWithText(summary, { firstByteDelayMs: options.summaryDelayMs, chunks: [summary] });
  };
}

/** The same trigger and keep for both products. */
export const CONVERSATION_POLICY = { triggerTokens: 3000, keepMessages: 12, summaryMaxTokens: 400 };
