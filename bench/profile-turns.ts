/**
 * A CPU profile of the server serving turns: `npm run bench:profile [-- threads seconds]` runs the throughput load
 * (the stub and the clients in a child process) against the whole app in this process and writes
 * bench/results/turns-<date>.cpuprofile (open it in Chrome DevTools or speedscope), with the CPU per turn and the
 * statements sent to Postgres per turn. `BENCH_PROFILE_ENV="RECALL_GATE=off RECALL_SCOPE=thread"` sets the app's
 * settings (a feature on or off: the per-feature table of bench/README.md).
 */
import { fork } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import type { LoadResult } from './load-generator';
import { requestJson } from './support/sse-client';
import { startApp, startServices, stopOnSignals } from './support/stack';
import { countQueries } from './support/count-queries';

const threads = Number(process.argv[2] ?? 8);
const seconds = Number(process.argv[3] ?? 15);
/** The app's settings from BENCH_PROFILE_ENV: `NAME=value` pairs separated by spaces or commas. */
const settings: Record<string, string> = Object.fromEntries(
  (process.env.BENCH_PROFILE_ENV ?? '')
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
const queries = countQueries();
const services = await startServices();
const removeHandlers = stopOnSignals(
  () => services.stop(),
  (message) => process.stderr.write(`${message}\n`),
);
const child = fork(path.join(import.meta.dirname, 'load-generator.ts'), [], {
  execArgv: ['--import', 'tsx'],
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
try {
  const stubUrl = await new Promise<string>((resolve) =>
    child.once('message', (message: { url: string }) => resolve(message.url)),
  );
  const app = await startApp(services, {
    env: { OPENAI_BASE_URL: stubUrl, OPENAI_API_KEY: 'bench-key', CHAT_MODEL: 'gpt-4o-mini', ...settings },
  });
  const { body: guest } = await requestJson<{ token: string }>({
    baseUrl: app.baseUrl,
    method: 'POST',
    path: '/api/auth/guest',
  });
  const threadIds: string[] = [];
  for (let index = 0; index < threads; index += 1) {
    const { body } = await requestJson<{ id: string }>({
      baseUrl: app.baseUrl,
      method: 'POST',
      path: '/api/threads',
      token: guest.token,
      body: { title: `profile ${index}` },
    });
    threadIds.push(body.id);
  }
  const run = (runSeconds: number): Promise<LoadResult> =>
    new Promise((resolve) => {
      child.once('message', (result: LoadResult) => resolve(result));
      child.send({ type: 'load', baseUrl: app.baseUrl, token: guest.token, threadIds, seconds: runSeconds });
    });
  await run(3);
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  queries.reset();
  const cpuBefore = process.cpuUsage();
  const result = await run(seconds);
  const cpu = process.cpuUsage(cpuBefore);
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  const file = path.join(
    import.meta.dirname,
    'results',
    `turns-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`,
  );
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify(profile));
  process.stdout.write(
    `${Object.keys(settings).length > 0 ? `settings: ${JSON.stringify(settings)}\n` : ''}${result.turns} turns in ${result.seconds.toFixed(1)} s (${result.failures} failed), server CPU ${((cpu.user + cpu.system) / 1000 / Math.max(1, result.turns)).toFixed(1)} ms per turn\n${file}\n`,
  );
  process.stdout.write(`statements per turn:\n${queries.perTurn(result.turns)}\n`);
  await app.stop();
} finally {
  child.send({ type: 'exit' });
  await services.stop();
  removeHandlers();
}
