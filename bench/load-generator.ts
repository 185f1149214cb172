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
  /** Each thread's own user's token (threadIds' order); absent: `token` for every thread. */
  tokens?: string[];
  seconds: number;
  /**
   * Offered load: start this many turns a second (open loop, on the threads in turn, a thread's next turn only once
   * its last one ended), instead of every thread sending again as soon as its turn ends.
   */
  turnsPerSecond?: number;
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

async function oneTurn(request: LoadRequest, threadId: string, latencies: number[]): Promise<boolean> {
  sequence += 1;
  const turn = await sendStreaming({
    baseUrl: request.baseUrl,
    threadId,
    token: request.tokens?.[request.threadIds.indexOf(threadId)] ?? request.token,
    content: `Load turn ${sequence}: how is the plan going?`,
    benchId: `l${sequence}`,
  }).catch(() => null);
  const end = turn?.events.find((event) => event.event === 'turn-end');
  if (turn && end && (end.data as { status?: string }).status === 'complete') {
    latencies.push(end.at - turn.sentAt);
    return true;
  }
  return false;
}

/** `turnsPerSecond` turns started a second, on schedule, each on the next thread that is not busy. */
async function offered(request: LoadRequest, rate: number): Promise<LoadResult> {
  const latencies: number[] = [];
  let failures = 0;
  let skipped = 0;
  const started = performance.now();
  const busyThreads = new Set<string>();
  const running: Promise<void>[] = [];
  let next = 0;
  for (let index = 0; ; index += 1) {
    const due = started + (index * 1000) / rate;
    if (due >= started + request.seconds * 1000) break;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    let threadId: string | undefined;
    for (let offset = 0; offset < request.threadIds.length && !threadId; offset += 1) {
      const candidate = request.threadIds[(next + offset) % request.threadIds.length]!;
      if (!busyThreads.has(candidate)) threadId = candidate;
    }
    next += 1;
    if (!threadId) {
      // Every thread still busy: the server is behind the offered load; the turn is counted as failed.
      skipped += 1;
      continue;
    }
    const chosen = threadId;
    busyThreads.add(chosen);
    running.push(
      oneTurn(request, chosen, latencies).then((ok) => {
        busyThreads.delete(chosen);
        if (!ok) failures += 1;
      }),
    );
  }
  await Promise.all(running);
  return {
    type: 'result',
    turns: latencies.length,
    failures: failures + skipped,
    seconds: (performance.now() - started) / 1000,
    latencies,
  };
}

async function busy(request: LoadRequest): Promise<LoadResult> {
  if (request.turnsPerSecond) return offered(request, request.turnsPerSecond);
  const latencies: number[] = [];
  let failures = 0;
  const started = performance.now();
  const deadline = started + request.seconds * 1000;
  await Promise.all(
    request.threadIds.map(async (threadId) => {
      while (performance.now() < deadline) if (!(await oneTurn(request, threadId, latencies))) failures += 1;
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
