import { fork } from 'node:child_process';
import path from 'node:path';
import { replyWithText } from '../test/support/openai-stub';
import { startBenchStack } from './support/bench-stack';
import { requestJson } from './support/sse-client';
import type { Services } from './support/stack';
import { distribution, type Distribution } from './support/stats';

export interface FanOutResult {
  tabs: number;
  deltas: number;
  delivered: number;
  /** Per delta: from the first tab receiving it to the last. */
  spreadMs: Distribution;
  /** Server process CPU (user + system) while streaming, per delivered event. */
  cpuMicrosPerEvent: number;
  rssAfterMb: number;
}

/**
 * 1,000 connected tabs of one thread (clients in a child process, the whole app in this one): one streamed answer
 * of `chunks` deltas, each delivered to every tab. Reports how long a delta takes to reach all tabs, and this
 * process' CPU time per delivered event (the stub's share is per chunk, not per tab: negligible next to 1,000 sends).
 */
export async function measureFanOut(services: Services, options: { tabs: number; chunks: number }): Promise<FanOutResult> {
  const chunks = Array.from({ length: options.chunks }, (_, index) => `part ${index} `);
  const stack = await startBenchStack(services, { responder: () => replyWithText('', { chunks, chunkDelayMs: 20 }) });
  const clients = fork(path.join(import.meta.dirname, 'fan-out-clients.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = <T>(type: string) => new Promise<T>((resolve, reject) => {
    const onMessage = (message: { type: string; message?: string }) => {
      if (message.type === type) { clients.off('message', onMessage); resolve(message as T); }
      if (message.type === 'error') { clients.off('message', onMessage); reject(new Error(message.message)); }
    };
    clients.on('message', onMessage);
  });
  try {
    const baseUrl = stack.app.baseUrl;
    const guest = await requestJson<{ token: string }>({ baseUrl, method: 'POST', path: '/api/auth/guest' });
    const token = guest.body.token;
    const thread = await requestJson<{ id: string }>({ baseUrl, method: 'POST', path: '/api/threads', token, body: {} });
    const ready = next('ready');
    clients.send({ type: 'start', baseUrl, token, threadId: thread.body.id, tabs: options.tabs });
    await ready;
    const cpuBefore = process.cpuUsage();
    const turn = await requestJson<{ turn: { status: string } }>({ baseUrl, method: 'POST', path: `/api/threads/${thread.body.id}/messages`, token, body: { content: 'stream to every tab' } });
    if (turn.status !== 201) throw new Error(`the fan-out turn failed: ${turn.status}`);
    // Let the last deltas land in every tab before counting.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const cpu = process.cpuUsage(cpuBefore);
    const collected = next<{ delivered: number; arrivals: number[][] }>('arrivals');
    clients.send({ type: 'collect' });
    const { delivered, arrivals } = await collected;
    const spreads = arrivals.map((times) => Math.max(...times) - Math.min(...times));
    (globalThis as { gc?: () => void }).gc?.();
    return {
      tabs: options.tabs, deltas: arrivals.length, delivered, spreadMs: distribution(spreads),
      cpuMicrosPerEvent: (cpu.user + cpu.system) / Math.max(1, delivered),
      rssAfterMb: process.memoryUsage().rss / 2 ** 20,
    };
  } finally {
    clients.send({ type: 'exit' });
    await stack.stop();
  }
}
