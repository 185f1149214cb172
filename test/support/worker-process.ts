import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
/**
 * Node flags for the processes tests start, from SERVER_EXEC_ARGV: e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to
 * profile the server a reliability test runs (NODE_OPTIONS refuses `--cpu-prof`).
 */
const execArgv = process.env.SERVER_EXEC_ARGV?.split(' ').filter(Boolean) ?? [];

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves once the process logged that it runs. */
  ready: Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** `npm run worker` as a real child process (so a test can SIGKILL it mid-job). */
export function startWorkerProcess(env: Record<string, string>): WorkerProcess {
  const child = spawn(process.execPath, [...execArgv, '--import', 'tsx', 'src/app/main.ts', 'worker'], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('worker running')) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready: ${output}`)));
  });
  return {
    child,
    output: () => output,
    ready,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill(signal);
      await exited;
    },
  };
}

export interface ServerProcess extends WorkerProcess {
  /** The HTTP port, once ready. */
  port: Promise<number>;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

/** `npm run serve` (or `all`) as a real child process on a free port; `port` resolves once it listens. */
export function startServerProcess(env: Record<string, string>, mode: 'serve' | 'all' = 'serve'): ServerProcess {
  const child = spawn(process.execPath, [...execArgv, '--import', 'tsx', 'src/app/main.ts', mode], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /ready: open http:\/\/localhost:(\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then((code) => reject(new Error(`${mode} exited (${code}) before it was ready: ${output}`)));
  });
  return {
    child,
    output: () => output,
    port,
    ready: port.then(() => undefined),
    exited,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
  };
}
