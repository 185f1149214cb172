/**
 * Builds the browser app (vite build: web/ -> web/dist) when web/dist is missing or older than its sources.
 * Runs before `npm start` (prestart) and the browser tests; `--force` always builds.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUTPUT = path.join(ROOT, 'web/dist/index.html');
const SOURCES = ['web/src', 'web/index.html', 'src/shared', 'vite.config.ts', 'package-lock.json'];

function newestChange(target: string): number {
  if (!existsSync(target)) return 0;
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(target)) newest = Math.max(newest, newestChange(path.join(target, entry)));
  return newest;
}

/** True when web/dist is missing or a source changed after the last build. */
export function webBuildIsStale(): boolean {
  if (!existsSync(OUTPUT)) return true;
  const built = statSync(OUTPUT).mtimeMs;
  return SOURCES.some((source) => newestChange(path.join(ROOT, source)) > built);
}

/** Builds when stale (or forced); resolves once web/dist is current. */
export async function buildWebIfStale(options: { force?: boolean } = {}): Promise<boolean> {
  if (!options.force && !webBuildIsStale()) return false;
  const { build } = await import('vite');
  // Always a production bundle (express serves it as is). Vite builds React's development runtime when NODE_ENV
  // says `development`, as `npm start` may run (the foundation test does), and that build reached the browser
  // tests: its StrictMode runs every mount effect twice, so a first visit signed in two guests.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({
      configFile: path.join(ROOT, 'vite.config.ts'),
      root: path.join(ROOT, 'web'),
      mode: 'production',
      logLevel: 'warn',
    });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  buildWebIfStale({ force: process.argv.includes('--force') }).then(
    (built) => {
      process.stdout.write(
        built ? `web app built in ${Date.now() - started} ms (web/dist)\n` : 'web app is up to date (web/dist)\n',
      );
    },
    (error: unknown) => {
      process.stderr.write(
        `web build failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}
