/**
 * `npm run dev`: the server with reload on change (tsx watch, port PORT or 3000) and Vite's dev server with hot
 * reload (WEB_DEV_PORT or 5173) proxying /api, /socket.io and /healthz to it. Open the Vite URL. Ctrl-C stops both.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name: string) => path.join(ROOT, 'node_modules/.bin', name);
const serverPort = process.env.PORT ?? '3000';

const children: ChildProcess[] = [
  spawn(bin('tsx'), ['watch', '--clear-screen=false', 'src/app/main.ts', 'all'], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, PORT: serverPort },
  }),
  spawn(bin('vite'), ['--config', 'vite.config.ts'], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, DEV_SERVER_URL: `http://localhost:${serverPort}` },
  }),
];

let stopping = false;
function stopAll(code: number): void {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGINT');
  const deadline = setTimeout(() => process.exit(code), 15_000);
  deadline.unref();
  Promise.all(
    children.map((child) =>
      child.exitCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', resolve)),
    ),
  ).then(
    () => process.exit(code),
    () => process.exit(1),
  );
}

for (const child of children) child.once('exit', (code) => stopAll(code ?? 1));
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));
