import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { findFreePort } from '../../src/app/embedded/process-tools';
import { composeConfig, composeVariables } from '../support/compose-file';
import { createTestDatabase } from '../support/databases';
import { startTestApp, type TestApp } from '../support/test-app';
import { startServerProcess, type ServerProcess } from '../support/worker-process';

const SECRETS = ['AUTH_SECRET', 'ADMIN_TOKEN', 'METRICS_TOKEN'] as const;
const secret = () => randomBytes(36).toString('base64url');

/** Every process a test started, so a failing test leaves none behind. */
const running = new Set<ServerProcess>();

function start(env: Record<string, string>): ServerProcess {
  const started = startServerProcess(env, 'serve');
  running.add(started);
  void started.exited.then(() => running.delete(started));
  return started;
}

/** Starts `serve` with `env` and expects it to refuse: exit 1 with exactly one line of output. */
async function refusal(env: Record<string, string>): Promise<string> {
  const started = start(env);
  started.port.catch(() => undefined);
  started.ready.catch(() => undefined);
  const code = await started.exited;
  const lines = started.output().trim().split('\n');
  expect({ code, lines: lines.length }, started.output()).toEqual({ code: 1, lines: 1 });
  return lines[0]!;
}

/** A non-loopback IPv4 address of this machine, if it has one. */
function externalAddress(): string | null {
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) if (entry.family === 'IPv4' && !entry.internal) return entry.address;
  }
  return null;
}

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 3000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

afterAll(async () => {
  for (const started of running) await started.kill('SIGKILL');
});

describe('docker-compose.yml', () => {
  it('cannot be rendered without AUTH_SECRET, ADMIN_TOKEN and METRICS_TOKEN, and names each missing one', () => {
    const none = composeConfig({});
    const named = (errors: string[]) =>
      new Set(SECRETS.filter((name) => errors.some((error) => error.includes(`variable ${name} `))));
    expect(named(none.errors)).toEqual(new Set(SECRETS));
    // An empty value counts as missing; the ones given are not reported.
    const partly = composeConfig({ AUTH_SECRET: secret(), ADMIN_TOKEN: '' });
    expect(named(partly.errors)).toEqual(new Set(['ADMIN_TOKEN', 'METRICS_TOKEN']));
    const all = composeConfig({ AUTH_SECRET: secret(), ADMIN_TOKEN: secret(), METRICS_TOKEN: secret() });
    expect(all.errors).toEqual([]);
  });

  it('has no fallback for any secret, passes OFFLINE_MODEL through and opens the metrics listener to the compose network only', () => {
    const variables = composeVariables();
    for (const name of SECRETS) {
      const uses = variables.filter((variable) => variable.name === name);
      expect(uses.length, name).toBeGreaterThan(0);
      for (const use of uses) expect({ name, operator: use.operator }).toEqual({ name, operator: ':?' });
    }
    const { services } = composeConfig({
      AUTH_SECRET: secret(),
      ADMIN_TOKEN: secret(),
      METRICS_TOKEN: secret(),
      OFFLINE_MODEL: 'allow',
    });
    for (const service of ['serve', 'worker']) {
      expect(services[service]?.environment).toMatchObject({
        NODE_ENV: 'production',
        OFFLINE_MODEL: 'allow',
        METRICS_PORT: '9464',
        METRICS_HOST: '0.0.0.0',
      });
    }
  });

  it('keeps guest sessions off unless .env turns them on (no anonymous model access on a public deployment)', () => {
    const tokens = { AUTH_SECRET: secret(), ADMIN_TOKEN: secret(), METRICS_TOKEN: secret() };
    const uses = composeVariables().filter((variable) => variable.name === 'ALLOW_GUESTS');
    expect(uses.map((use) => use.argument)).toEqual(['false']);
    expect(composeConfig(tokens).services.serve?.environment?.ALLOW_GUESTS).toBe('false');
    expect(composeConfig({ ...tokens, ALLOW_GUESTS: '' }).services.serve?.environment?.ALLOW_GUESTS).toBe('false');
    expect(composeConfig({ ...tokens, ALLOW_GUESTS: 'true' }).services.serve?.environment?.ALLOW_GUESTS).toBe('true');
  });

  it('with its secrets set, starts the serve service in production; /metrics takes the metrics token, not the admin token', async () => {
    const tokens = { AUTH_SECRET: secret(), ADMIN_TOKEN: secret(), METRICS_TOKEN: secret() };
    const environment = composeConfig({ ...tokens, OFFLINE_MODEL: 'allow' }).services.serve?.environment ?? {};
    expect(environment).toMatchObject({ NODE_ENV: 'production', ...tokens });
    const database = await createTestDatabase('compose');
    const metricsPort = await findFreePort();
    // Compose's service names do not resolve here: the test's Postgres and Redis stand in for them.
    const server = start({
      ...environment,
      DATABASE_URL: database.url,
      REDIS_URL: inject('redisUrl'),
      REDIS_PREFIX: `c${randomBytes(4).toString('hex')}`,
      PORT: '0',
      HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
    });
    const port = await server.port;
    expect(server.output()).toMatch(/offline/i);
    const metrics = (token: string) =>
      fetch(`http://127.0.0.1:${port}/metrics`, { headers: { Authorization: `Bearer ${token}` } });
    expect((await metrics(tokens.METRICS_TOKEN)).status).toBe(200);
    expect((await metrics(tokens.ADMIN_TOKEN)).status).toBe(401);
    // Guests are off by default: nobody gets a session (and model access) without a sign-in.
    expect((await fetch(`http://127.0.0.1:${port}/api/auth/guest`, { method: 'POST' })).status).toBe(403);
    // METRICS_HOST=0.0.0.0: the scraper reaches it over the network.
    const external = externalAddress();
    expect(external, 'this check needs a non-loopback IPv4 interface').not.toBeNull();
    expect(await reachable(external!, metricsPort)).toBe(true);
    expect(await reachable('127.0.0.1', metricsPort)).toBe(true);
    await server.kill('SIGTERM');
    await database.drop();
  }, 90_000);
});

describe('production secrets', () => {
  let base: Record<string, string>;
  beforeAll(async () => {
    const database = await createTestDatabase('prodsecrets');
    base = {
      NODE_ENV: 'production',
      DATABASE_URL: database.url,
      REDIS_URL: inject('redisUrl'),
      OFFLINE_MODEL: 'allow',
      AUTH_SECRET: secret(),
      ADMIN_TOKEN: secret(),
      METRICS_TOKEN: secret(),
    };
  });

  it('refuses the placeholders once shipped in docker-compose.yml, and a metrics token equal to the admin token', async () => {
    const [placeholders, same] = await Promise.all([
      refusal({
        ...base,
        AUTH_SECRET: 'change-me-to-a-long-random-secret-of-32-chars',
        ADMIN_TOKEN: 'change-me-admin-token',
      }),
      refusal({ ...base, METRICS_TOKEN: base.ADMIN_TOKEN! }),
    ]);
    expect(placeholders).toBe(
      'Configuration error: AUTH_SECRET: a placeholder value is refused when NODE_ENV=production; generate one, e.g. `openssl rand -base64 48`',
    );
    expect(same).toBe(
      'Configuration error: METRICS_TOKEN: must differ from ADMIN_TOKEN when NODE_ENV=production (a scraper must not hold the admin token)',
    );
  }, 90_000);

  it('refuses to serve the offline model in production unless OFFLINE_MODEL=allow (the compose test above starts with it)', async () => {
    const line = await refusal({ ...base, OFFLINE_MODEL: '' });
    expect(line).toBe(
      'Configuration error: OPENAI_BASE_URL / OPENAI_API_KEY: no model endpoint configured; set one (or ANTHROPIC_API_KEY), or OFFLINE_MODEL=allow to serve the built-in offline demo model',
    );
  }, 90_000);
});

describe('the METRICS_PORT listener', () => {
  let app: TestApp;
  beforeAll(async () => {
    // HOST is every interface, as in a container; METRICS_HOST is not set.
    app = await startTestApp({ env: { HOST: '0.0.0.0', METRICS_PORT: '0' } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('listens on loopback unless METRICS_HOST says otherwise', async () => {
    const port = app.application.metricsPort!;
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    const external = externalAddress();
    expect(external, 'this check needs a non-loopback IPv4 interface').not.toBeNull();
    expect(await reachable(external!, port)).toBe(false);
  });
});
