import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { requestJson } from './support/sse-client';
import { startApp, type Services } from './support/stack';
import type { Figure } from './support/report';
import { distribution, round, type Distribution } from './support/stats';

export interface FanOutResult {
  tabs: number;
  /** Deltas the model streamed in the measured answer. */
  deltas: number;
  /** `message-delta` frames the tabs received in all (each tab gets the same frames). */
  frames: number;
  /** Frames one tab received for the answer (`frames / tabs`): `deltas` when every delta is its own frame. */
  framesPerAnswer: number;
  /** Tabs that rebuilt exactly the answer's text from their frames (the offset rule, not `message-end`). */
  completeTabs: number;
  /** Frames a tab could not apply (an offset beyond its text): 0 when nothing is lost. */
  gaps: number;
  /** Per frame: from the first tab receiving it to the last. */
  spreadMs: Distribution;
  /**
   * Server process CPU (user + system) while streaming, per delta the model produced and tab that got the whole
   * text: the same unit whether deltas travel one per frame or several per frame.
   */
  cpuMicrosPerDelta: number;
  /** The same CPU per frame delivered to a tab. */
  cpuMicrosPerFrame: number;
  /** The share of that CPU spent in the kernel (socket writes over loopback are charged to the sender). */
  systemShare: number;
  rssAfterMb: number;
}

/**
 * 1,000 connected tabs of one thread (the clients in a child process, the model stub in another, the whole app in this one): one
 * streamed answer of `chunks` deltas, each delivered to every tab, after one such answer that is not counted (it warms
 * the send path). Reports how long a frame takes to reach all tabs, how many frames carried the answer, whether every
 * tab rebuilt the whole text from them, and this process' CPU time (the server's alone) per delivered delta.
 */
export async function measureFanOut(
  services: Services,
  options: { tabs: number; chunks: number; env?: Record<string, string> },
): Promise<FanOutResult> {
  const child = (file: string) =>
    fork(path.join(import.meta.dirname, file), [String(options.chunks)], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
  const stub = child('fan-out-stub.ts');
  const clients = child('fan-out-clients.ts');
  const exit = () => {
    for (const each of [stub, clients]) each.send({ type: 'exit' });
  };
  const nextFrom =
    (from: ChildProcess) =>
    <T>(type: string) =>
      new Promise<T>((resolve, reject) => {
        const onMessage = (message: { type: string; message?: string }) => {
          if (message.type === type) {
            from.off('message', onMessage);
            resolve(message as T);
          }
          if (message.type === 'error') {
            from.off('message', onMessage);
            reject(new Error(message.message));
          }
        };
        from.on('message', onMessage);
      });
  const next = nextFrom(clients);
  const stubUrl = (await nextFrom(stub)<{ url: string }>('stub')).url;
  const app = await startApp(services, {
    env: { OPENAI_BASE_URL: stubUrl, OPENAI_API_KEY: 'bench-key', CHAT_MODEL: 'gpt-4o-mini', ...options.env },
  }).catch((error: unknown) => {
    exit();
    throw error;
  });
  try {
    const baseUrl = app.baseUrl;
    const guest = await requestJson<{ token: string }>({ baseUrl, method: 'POST', path: '/api/auth/guest' });
    const token = guest.body.token;
    const thread = await requestJson<{ id: string }>({
      baseUrl,
      method: 'POST',
      path: '/api/threads',
      token,
      body: {},
    });
    const ready = next('ready');
    clients.send({ type: 'start', baseUrl, token, threadId: thread.body.id, tabs: options.tabs });
    await ready;
    const streamToEveryTab = async (content: string) => {
      const turn = await requestJson<{ turn: { status: string } }>({
        baseUrl,
        method: 'POST',
        path: `/api/threads/${thread.body.id}/messages`,
        token,
        body: { content },
      });
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
    const collected = next<{ frames: number; gaps: number; completeTabs: number; arrivals: number[][] }>('arrivals');
    clients.send({ type: 'collect' });
    const { frames, gaps, completeTabs, arrivals } = await collected;
    const spreads = arrivals.map((times) => Math.max(...times) - Math.min(...times));
    (globalThis as { gc?: () => void }).gc?.();
    const cpuMicros = cpu.user + cpu.system;
    return {
      tabs: options.tabs,
      deltas: options.chunks,
      frames,
      framesPerAnswer: frames / options.tabs,
      completeTabs,
      gaps,
      spreadMs: distribution(spreads),
      // A tab that missed text counts for nothing: the figure only gets worse when delivery fails.
      cpuMicrosPerDelta: cpuMicros / Math.max(1, options.chunks * completeTabs),
      cpuMicrosPerFrame: cpuMicros / Math.max(1, frames),
      systemShare: cpu.system / Math.max(1, cpuMicros),
      rssAfterMb: process.memoryUsage().rss / 2 ** 20,
    };
  } finally {
    exit();
    await app.stop();
  }
}

/** The fan-out run's figures: the CPU headline in `cpuSection`, the rest in section 6 and 7. */
export function fanOutFigures(fanOut: FanOutResult, cpuSection: string): Figure[] {
  const delivered = `${fanOut.completeTabs} of ${fanOut.tabs} tabs got the whole text${fanOut.gaps > 0 ? `, ${fanOut.gaps} gaps` : ''}`;
  return [
    {
      section: cpuSection,
      name: `server CPU per delivered delta (${fanOut.tabs} tabs)`,
      value: round(fanOut.cpuMicrosPerDelta, 1),
      unit: 'µs',
      target: { op: '<=', value: 10 },
      note: `${fanOut.deltas} deltas × ${fanOut.completeTabs} tabs; ${round(fanOut.framesPerAnswer, 1)} frames per answer`,
    },
    {
      section: '6 fan-out',
      name: `${fanOut.tabs} sockets: a frame reaching all tabs, first to last tab p50 / p99 (${fanOut.deltas} deltas)`,
      value: `${Math.round(fanOut.spreadMs.p50)} / ${Math.round(fanOut.spreadMs.p99)}`,
      unit: 'ms',
    },
    {
      section: '6 fan-out',
      name: `socket frames per answer per tab (the model streamed ${fanOut.deltas} deltas)`,
      value: round(fanOut.framesPerAnswer, 1),
      note: delivered,
    },
    {
      section: '6 fan-out',
      name: 'server CPU per frame delivered to a tab',
      value: round(fanOut.cpuMicrosPerFrame, 1),
      unit: 'µs',
      note: `${fanOut.frames} frames; ${Math.round(fanOut.systemShare * 100)}% in the kernel`,
    },
    {
      section: '7 memory',
      name: `server RSS after the ${fanOut.tabs}-socket run`,
      value: Math.round(fanOut.rssAfterMb),
      unit: 'MB',
    },
  ];
}
