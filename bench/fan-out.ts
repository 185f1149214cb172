import { fork } from 'node:child_process';
import path from 'node:path';
import { requestJson } from './support/sse-client';
import { startApp, type Services } from './support/stack';
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
 * 1,000 connected tabs of one thread (clients and the model stub in a child process, the whole app in this one): one
 * streamed answer of `chunks` deltas, each delivered to every tab, after one such answer that is not counted (it warms
 * the send path). Reports how long a delta takes to reach all tabs, and this process' CPU time (the server's alone)
 * per delivered event.
 */
export async function measureFanOut(services: Services, options: { tabs: number; chunks: number }): Promise<FanOutResult> {
  const clients = fork(path.join(import.meta.dirname, 'fan-out-clients.ts'), [String(options.chunks)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = <T>(type: string) => new Promise<T>((resolve, reject) => {
    const onMessage = (message: { type: string; message?: string }) => {
      if (message.type === type) { clients.off('message', onMessage); resolve(message as T); }
      if (message.type === 'error') { clients.off('message', onMessage); reject(new Error(message.message)); }
    };
    clients.on('message', onMessage);
  });
  const stubUrl = (await next<{ url: string }>('stub')).url;
  const app = await startApp(services, { env: { OPENAI_BASE_URL: stubUrl, OPENAI_API_KEY: 'bench-key', CHAT_MODEL: 'gpt-4o-mini' } }).catch((error: unknown) => {
    clients.send({ type: 'exit' });
    throw error;
  });
  try {
    const baseUrl = app.baseUrl;
    const guest = await requestJson<{ token: string }>({ baseUrl, method: 'POST', path: '/api/auth/guest' });
    const token = guest.body.token;
    const thread = await requestJson<{ id: string }>({ baseUrl, method: 'POST', path: '/api/threads', token, body: {} });
    const ready = next('ready');
    clients.send({ type: 'start', baseUrl, token, threadId: thread.body.id, tabs: options.tabs });
    await ready;
    const streamToEveryTab = async (content: string) => {
      const turn = await requestJson<{ turn: { status: string } }>({ baseUrl, method: 'POST', path: `/api/threads/${thread.body.id}/messages`, token, body: { content } });
      if (turn.status !== 201) throw new Error(`the fan-out turn failed: ${turn.status}`);
      // Let the last deltas land in every tab before counting.
      await new Promise((resolve) => setTimeout(resolve, 1000));
    };
    // One answer first, not counted: the first broadcast to 1,000 sockets compiles socket.io's, engine.io's and
    // ws' send paths (about 0.6 s of the compiler threads' CPU, once per process), which is no cost per event.
    await streamToEveryTab('warm up every tab');
    const cleared = next('cleared');
    clients.send({ type: 'clear' });
    await cleared;
    const cpuBefore = process.cpuUsage();
    await streamToEveryTab('stream to every tab');
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
    await app.stop();
  }
}
