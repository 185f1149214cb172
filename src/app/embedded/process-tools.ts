import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createServer } from 'node:net';

/** A free TCP port on the loopback interface, chosen by the kernel. */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Runs a command to completion; rejects with its output when it exits non-zero. */
export function run(command: string, args: string[], options: SpawnOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}: ${output.trim().slice(-2000)}`));
    });
  });
}

/**
 * Starts a long-running service in its own process group (`detached`), so the terminal's Ctrl-C
 * reaches only the app, which then stops the service explicitly after draining.
 * Resolves once `isReady(outputSoFar)` is true; rejects if the process exits first.
 */
export function startService(options: {
  command: string;
  args: string[];
  spawnOptions?: SpawnOptions;
  isReady: (output: string) => boolean;
  timeoutMs?: number;
  name: string;
}): Promise<ChildProcess> {
  const { command, args, spawnOptions = {}, isReady, timeoutMs = 30_000, name } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...spawnOptions, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let settled = false;
    const timer = setTimeout(
      () => finish(new Error(`${name} did not become ready within ${timeoutMs} ms: ${output.slice(-2000)}`)),
      timeoutMs,
    );
    function finish(error?: Error): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        child.kill('SIGKILL');
        reject(error);
      } else {
        // Keep draining the pipes so the service never blocks on a full buffer.
        child.stdout?.resume();
        child.stderr?.resume();
        resolve(child);
      }
    }
    const onData = (chunk: Buffer): void => {
      if (settled) return;
      output += chunk.toString();
      if (isReady(output)) finish();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('error', (error) => finish(error));
    child.on('exit', (code, signal) =>
      finish(new Error(`${name} exited early (code ${code}, signal ${signal}): ${output.slice(-2000)}`)),
    );
  });
}

/** Sends `signal` and waits for the process to exit, escalating to SIGKILL after `timeoutMs`. */
export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals, timeoutMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(timer);
}
