import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findFreePort, isProcessAlive } from '../../src/app/embedded/process-tools';
import { waitFor } from '../support/wait-for';
import { startServerProcess } from '../support/worker-process';
import { makeServiceTempDir } from '../../src/app/embedded/service-temp-dir';
import { SHARED_DATA_DIR } from '../../src/app/embedded/embedded-postgres';

const root = path.resolve(import.meta.dirname, '../..');

interface Started {
  child: ChildProcess;
  output: () => string;
}

/** Every server a test started, so a failing test never leaves one (and its Postgres/Redis) running. */
const running = new Set<ChildProcess>();

/**
 * The README's command itself, `npm start` (its prestart builds the web app), with no service URLs: embedded
 * Postgres and Redis under DATA_DIR. In its own process group, as a terminal runs it, so Ctrl-C reaches the group.
 */
async function start(dataDir: string, port: number): Promise<Started> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    LOG_LEVEL: 'info',
    NODE_ENV: 'development',
  };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'AUTH_SECRET', 'ADMIN_TOKEN'])
    delete env[name];
  // npm as the user runs it (not the test runner's npm_* environment, which would make it a nested script).
  for (const name of Object.keys(env)) if (name.startsWith('npm_')) delete env[name];
  const child = spawn('npm', ['start'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // The prestart web build may take a while on a busy machine.
  const deadline = Date.now() + 180_000;
  while (!output.includes('ready: open http://localhost')) {
    if (child.exitCode !== null) throw new Error(`npm start exited: ${output}`);
    if (Date.now() > deadline) throw new Error(`not ready within 180 s: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, output: () => output };
}

/** Readiness follows the first connections by a moment (slower on a loaded machine). */
async function waitForReady(port: number): Promise<void> {
  await waitFor(
    async () =>
      ((await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as { status: string }).status === 'ready',
    { timeoutMs: 20_000, what: 'Postgres and Redis up' },
  );
}

/**
 * Ctrl-C: SIGINT to the whole foreground group (npm and the server under it). npm ends as interrupted (by the
 * signal) once its script ended; what matters is how the server under it ended: true when it stopped cleanly.
 */
async function stop(started: Started): Promise<boolean> {
  if (started.child.exitCode === null && started.child.signalCode === null) {
    const exited = new Promise<void>((resolve) => started.child.once('exit', () => resolve()));
    process.kill(-(started.child.pid ?? 0), 'SIGINT');
    await exited;
  }
  return started.output().includes('"msg":"stopped cleanly"') && !started.output().includes('second signal');
}

async function servicePids(dataDir: string): Promise<number[]> {
  const pidFile = await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').catch(() => '');
  return pidFile ? [Number(pidFile.split('\n')[0])] : [];
}

describe('npm start on embedded defaults', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const child of running) await stop({ child, output: () => '' });
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('serves /healthz and /readyz, keeps its data across restarts, and leaves no process behind on Ctrl-C', async () => {
    const dataDir = await makeServiceTempDir('chat-start-');
    dirs.push(dataDir);
    const port = await findFreePort();

    const first = await start(dataDir, port);
    // npm ran the prestart web build, and the server serves the built app.
    expect(first.output()).toMatch(/web app (built in \d+ ms|is up to date) \(web\/dist\)/);
    const page = await fetch(`http://127.0.0.1:${port}/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const script = /<script[^>]+src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    expect((await fetch(`http://127.0.0.1:${port}${script}`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    await waitForReady(port);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ postgres: 'up', redis: 'up' });
    // The log says where the admin token is, never the token itself.
    const adminToken = (await readFile(path.join(dataDir, 'admin-token'), 'utf8')).trim();
    expect(adminToken.length).toBeGreaterThan(20);
    expect(first.output()).toContain(path.join(dataDir, 'admin-token'));
    expect(first.output()).not.toContain(adminToken);

    const guest = (await (await fetch(`http://127.0.0.1:${port}/api/auth/guest`, { method: 'POST' })).json()) as {
      token: string;
    };
    const created = await fetch(`http://127.0.0.1:${port}/api/threads`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${guest.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ title: 'kept across restarts' }),
    });
    expect(created.status).toBe(201);
    const threadId = ((await created.json()) as { id: string }).id;

    // A second process joins with the URLs the start log prints (README, "Several processes"): the same database
    // (`chat`), the same Redis, the same data directory's secret, so the first process's guest sees its thread there.
    const joinUrl = (service: string) =>
      new RegExp(`other processes join with ${service}=(\\S+?)"`).exec(first.output())?.[1] ?? '';
    expect(joinUrl('DATABASE_URL')).toMatch(/^postgresql:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/chat$/);
    expect(joinUrl('REDIS_URL')).toMatch(/^redis:\/\/127\.0\.0\.1:\d+/);
    const joined = startServerProcess({
      DATABASE_URL: joinUrl('DATABASE_URL'),
      REDIS_URL: joinUrl('REDIS_URL'),
      DATA_DIR: dataDir,
    });
    try {
      const listed = await fetch(`http://127.0.0.1:${await joined.port}/api/threads`, {
        headers: { Authorization: `Bearer ${guest.token}` },
      });
      expect(listed.status).toBe(200);
      expect(((await listed.json()) as { threads: { id: string }[] }).threads.map((thread) => thread.id)).toEqual([
        threadId,
      ]);
    } finally {
      await joined.kill('SIGTERM');
    }

    // Chat with the offline model until the trigger fires, and watch the summary appear.
    const auth = { Authorization: `Bearer ${guest.token}`, 'Content-Type': 'application/json' };
    for (let turn = 1; turn <= 12; turn += 1) {
      const content = `Part ${turn} of my notes: the invoice INV-${4000 + turn} is due on 2026-12-${10 + turn}. ${'Details about the shipment, the customer and the warehouse schedule follow here. '.repeat(30)}`;
      const sent = await fetch(`http://127.0.0.1:${port}/api/threads/${threadId}/messages`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ content }),
      });
      expect(sent.status).toBe(201);
      const answer = ((await sent.json()) as { messages: { content: string }[] }).messages.at(-1)?.content ?? '';
      expect(answer.length).toBeGreaterThan(0);
    }
    await waitFor(
      async () => {
        const detail = (await (
          await fetch(`http://127.0.0.1:${port}/api/threads/${threadId}`, { headers: auth })
        ).json()) as { context: { revision: number } };
        return detail.context.revision > 0;
      },
      { timeoutMs: 30_000, what: 'the offline summary' },
    );
    const context = (await (
      await fetch(`http://127.0.0.1:${port}/api/threads/${threadId}/context`, { headers: auth })
    ).json()) as { summary: { text: string } | null };
    // The offline model's 2,048-token demo window keeps a short summary: it holds invoice numbers of folded parts.
    expect(context.summary?.text).toMatch(/INV-40\d\d/);

    const postgresPids = await servicePids(dataDir);
    expect(postgresPids.length).toBe(1);

    expect(await stop(first)).toBe(true);
    for (const pid of postgresPids) expect(isProcessAlive(pid)).toBe(false);
    expect(first.output()).toContain('embedded postgres stopped');
    expect(first.output()).toContain('embedded redis stopped');

    // A second start reuses the data: the guest's token (secret kept under DATA_DIR) still lists its thread.
    const second = await start(dataDir, port);
    const threads = await fetch(`http://127.0.0.1:${port}/api/threads`, {
      headers: { Authorization: `Bearer ${guest.token}` },
    });
    expect(threads.status).toBe(200);
    expect(((await threads.json()) as { threads: { title: string }[] }).threads.map((thread) => thread.title)).toEqual([
      'kept across restarts',
    ]);
    expect(await stop(second)).toBe(true);
  }, 400_000);

  it('starts from a directory other users cannot enter, without widening its permissions', async () => {
    // Like a checkout in root's home: mkdtemp's 0700, which the `postgres` user (Postgres' user when we are root) cannot traverse.
    const home = await mkdtemp(path.join(tmpdir(), 'chat-private-'));
    dirs.push(home);
    const dataDir = path.join(home, '.data');
    const port = await findFreePort();
    const started = await start(dataDir, port);
    try {
      await waitForReady(port);
      const guest = (await (await fetch(`http://127.0.0.1:${port}/api/auth/guest`, { method: 'POST' })).json()) as {
        token: string;
      };
      const sent = await fetch(`http://127.0.0.1:${port}/api/threads`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${guest.token}`, 'Content-Type': 'application/json' },
        body: '{}',
      });
      expect(sent.status).toBe(201);
    } finally {
      expect(await stop(started)).toBe(true);
    }
    expect((await stat(home)).mode & 0o777).toBe(0o700);
    if (userInfo().uid === 0) {
      // The cluster lives in a root-owned shared directory; DATA_DIR/postgres says where.
      const cluster = await realpath(path.join(dataDir, 'postgres'));
      expect(cluster.startsWith(`${SHARED_DATA_DIR}/`)).toBe(true);
      dirs.push(path.dirname(cluster));
      expect(started.output()).toContain(`its data lives in ${cluster}`);
    }
  }, 400_000);
});
