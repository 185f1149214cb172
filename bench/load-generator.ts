/**
 * A separate process for the throughput run: the model stub and the clients, so the server's event loop is the
 * server's alone (they still share the machine's 2 cores). Speaks to the parent over IPC:
 * parent -> { type: 'load', baseUrl, token, threadIds, seconds }; child -> { type: 'stub', url }, { type: 'result', ... }.
 */
import { replyWithText, startOpenAIStub } from '../test/support/openai-stub';
import { closeConnections, sendStreaming } from './support/sse-client';

interface LoadRequest {
  type: 'load';
  baseUrl: string;
  token: string;
  threadIds: string[];
  seconds: number;
}

export interface LoadResult {
  type: 'result';
  turns: number;
  failures: number;
  seconds: number;
  latencies: number[];
}

const answer = 'Fine, thanks: the plan is on track.';
// The stub does not tokenize prompts (and so reports no usage): its CPU would compete with the server's.
const stub = await startOpenAIStub({
  responder: () => replyWithText(answer, { chunks: [answer], omitUsage: true }),
  countPromptTokens: false,
});
process.send?.({ type: 'stub', url: stub.url });

let sequence = 0;
async function busy(request: LoadRequest): Promise<LoadResult> {
  const latencies: number[] = [];
  let failures = 0;
  const started = performance.now();
  const deadline = started + request.seconds * 1000;
  await Promise.all(
    request.threadIds.map(async (threadId) => {
      while (performance.now() < deadline) {
        sequence += 1;
        const turn = await sendStreaming({
          baseUrl: request.baseUrl,
          threadId,
          token: request.token,
          content: `Load turn ${sequence}: how is the plan going?`,
          benchId: `l${sequence}`,
        }).catch(() => null);
        const end = turn?.events.find((event) => event.event === 'turn-end');
        if (turn && end && (end.data as { status?: string }).status === 'complete')
          latencies.push(end.at - turn.sentAt);
        else failures += 1;
      }
    }),
  );
  return {
    type: 'result',
    turns: latencies.length,
    failures,
    seconds: (performance.now() - started) / 1000,
    latencies,
  };
}

process.on('message', (message: LoadRequest | { type: 'exit' }) => {
  if (message.type === 'exit') {
    void stub.close().then(() => process.exit(0));
    return;
  }
  void busy(message).then((result) => {
    // Nothing of the run stays open between the server and this process: the parent measures the server's heap
    // after a run, and open keep-alive connections (ours, and the server's to the stub) would be counted in it.
    closeConnections();
    stub.closeIdleConnections();
    stub.reset();
    process.send?.(result);
  });
});
