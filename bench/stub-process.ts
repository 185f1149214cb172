/**
 * The model stub in a process of its own, for the scripted conversation (bench/conversation.ts): its JSON parsing,
 * its token counting (the usage it reports, as a model server does) and its HTTP serving then run beside the
 * server, not on the server's event loop, as a real model does. The answers are the same as in-process.
 * Speaks to the parent over IPC: child -> { type: 'stub', url }; parent -> { type: 'records' } ->
 * child { type: 'records', records }; parent -> { type: 'exit' }.
 */
import { lastUserText, startOpenAIStub } from '../test/support/openai-stub';
import { classifyRequest } from '../test/support/summary-stub';
import { scriptedResponder } from './support/script';

/** What the parent learns of each model request once the run is over. */
export interface ChildStubRecord {
  kind: string;
  promptTokens: number;
  /** The bench's tag of the turn (`[b:tag]` in the last user message), for chat requests. */
  tag: string | null;
}

const summaryDelayMs = Number.parseInt(process.env.BENCH_STUB_SUMMARY_DELAY_MS ?? '0', 10);
const stub = await startOpenAIStub({
  classifyRequest,
  responder: scriptedResponder({ summaryDelayMs }),
  maxContextTokens: 1_000_000,
});
process.send?.({ type: 'stub', url: stub.url });

process.on('message', (message: { type: 'records' | 'exit' }) => {
  if (message.type === 'exit') {
    void stub.close().then(() => process.exit(0));
    return;
  }
  const records: ChildStubRecord[] = stub.requests.map((request) => ({
    kind: request.kind,
    promptTokens: request.promptTokens,
    tag: request.kind === 'chat' ? (/\[b:([A-Za-z0-9-]+)\]/.exec(lastUserText(request.body))?.[1] ?? null) : null,
  }));
  process.send?.({ type: 'records', records });
});
