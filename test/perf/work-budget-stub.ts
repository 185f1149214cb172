/**
 * The model stub of the work-budget test, in a process of its own: its JSON parsing and token counting (the usage it
 * reports) would otherwise be counted as the server's work. Every answer is one word, so one streamed delta: how
 * many deltas arrive before the assistant message's row exists would otherwise depend on timing.
 * "Search: <words>" makes the model call search_transcript; the tool's result gets "Found.".
 * IPC: child -> { type: 'stub', url }; parent -> { type: 'requests' } -> child { type: 'requests', requests };
 * parent -> { type: 'exit' }.
 */
import { RECALL_HEADING } from '../../src/core/context';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import {
  lastUserText,
  replyWithText,
  replyWithToolCalls,
  startOpenAIStub,
  type StubResponder,
} from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';

/** What the parent learns of each model request. */
export interface WorkBudgetStubRequest {
  kind: string;
  /** Whether the prompt carried a recall slot. */
  recall: boolean;
  /** Whether the prompt ended with a tool result. */
  toolResult: boolean;
}

const chat: StubResponder = (request) => {
  if (request.body.messages.at(-1)?.role === 'tool') return replyWithText('Found.');
  const asked = /Search: (.+)$/.exec(lastUserText(request.body));
  if (asked) return replyWithToolCalls([{ name: 'search_transcript', arguments: { query: asked[1] } }]);
  return replyWithText('Noted.');
};

const stub = await startOpenAIStub({ classifyRequest, responder: summaryResponder({ chat }) });
process.send?.({ type: 'stub', url: stub.url });

process.on('message', (message: { type: 'requests' | 'exit' }) => {
  if (message.type === 'exit') {
    void stub.close().then(() => process.exit(0));
    return;
  }
  const requests: WorkBudgetStubRequest[] = stub.requests.map((request) => ({
    kind: request.kind,
    recall: request.body.messages.some((entry) => wireContentText(entry.content).includes(RECALL_HEADING)),
    toolResult: request.body.messages.at(-1)?.role === 'tool',
  }));
  process.send?.({ type: 'requests', requests });
});
