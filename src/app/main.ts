import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadEnv, type Env } from '../config/env';
import { applyMigrations } from '../db/migrate';
import { createApplication, type ProcessMode } from './compose';
import { loadOrCreateSecret } from './dev-secrets';
import { RedisUnavailableError } from './embedded/embedded-redis';
import { startEmbeddedServices } from './embedded/start-embedded-services';
import { createLogger, secretsOfEnv, type Logger } from './logger';
import { mountWebApp } from './mount-web-app';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

async function secrets(env: Env, log: Logger): Promise<{ authSecret: string; adminToken: string }> {
  const authSecret =
    env.AUTH_SECRET ?? (await loadOrCreateSecret({ dataDir: env.DATA_DIR, name: 'auth-secret', bytes: 48 })).value;
  if (env.ADMIN_TOKEN) return { authSecret, adminToken: env.ADMIN_TOKEN };
  const admin = await loadOrCreateSecret({ dataDir: env.DATA_DIR, name: 'admin-token' });
  // Say where the token is, never the token itself.
  log.info(
    { file: admin.file },
    admin.created ? 'generated an admin token (development only)' : 'admin token read from the data directory',
  );
  return { authSecret, adminToken: admin.value };
}

/**
 * SIGINT and SIGTERM stop the application and the services (`stopAll`), then exit; a second signal, or a stop that
 * outlasts the grace period by 20 s, exits at once.
 */
function stopOnSignals(env: Env, log: Logger, stopAll: () => Promise<void>): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info(
      { signal, graceMs: env.SHUTDOWN_GRACE_MS },
      'shutting down: draining turns, closing workers, stopping services',
    );
    // A stop that hangs (a dependency that never answers) must not keep the process from exiting.
    setTimeout(() => {
      log.error('shutdown did not finish in time: exiting');
      process.exit(1);
    }, env.SHUTDOWN_GRACE_MS + 20_000).unref();
    try {
      await stopAll();
      log.info('stopped cleanly');
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

async function main(): Promise<void> {
  const mode = (process.argv[2] ?? 'all') as ProcessMode;
  if (!['all', 'serve', 'worker'].includes(mode))
    throw new ConfigError(`mode: expected all, serve or worker, got ${mode}`);
  const env = loadEnv();
  // Scrubbed from every log line, whatever structure they hide in; the generated ones are added once read.
  const secretValues = secretsOfEnv(env);
  const log = createLogger({ level: env.LOG_LEVEL, name: mode, secrets: secretValues });
  if (mode !== 'all' && (!env.DATABASE_URL || !env.REDIS_URL)) {
    throw new ConfigError(
      `DATABASE_URL / REDIS_URL: required by \`npm run ${mode}\` (several processes share one Postgres and Redis); \`npm start\` starts embedded ones`,
    );
  }
  const services = await startEmbeddedServices({
    dataDir: env.DATA_DIR,
    log,
    ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
    ...(env.REDIS_URL ? { redisUrl: env.REDIS_URL } : {}),
  });
  let application: Awaited<ReturnType<typeof createApplication>> | null = null;
  stopOnSignals(env, log, async () => {
    await application?.stop();
    await services.stop();
  });
  try {
    const applied = await applyMigrations({
      databaseUrl: services.databaseUrl,
      migrationsDir: path.join(ROOT, 'prisma/migrations'),
      log,
    });
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
    const { authSecret, adminToken } = await secrets(env, log);
    secretValues.add(authSecret);
    secretValues.add(adminToken);
    application = await createApplication({
      env,
      databaseUrl: services.databaseUrl,
      redisUrl: services.redisUrl,
      authSecret,
      adminToken,
      log,
      mode,
      mountStatic: mountWebApp(),
    });
    if (mode === 'worker') {
      application.sweeper.start();
      log.info('worker running');
      return;
    }
    if (application.metricsPort !== null)
      log.info({ port: application.metricsPort }, 'metrics listening (no auth: keep this port private)');
    const port = await application.listen(env.PORT);
    log.info(`ready: open http://localhost:${port}`);
  } catch (error) {
    // The start's own error is what the process reports (rethrown below); a failed stop after it is logged beside it.
    await application
      ?.stop(0)
      .catch((stopError: unknown) => log.error({ err: stopError }, 'stopping after a failed start failed'));
    await services.stop();
    throw error;
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof RedisUnavailableError) {
    process.stderr.write(`Configuration error: ${error.message}\n`);
  } else {
    process.stderr.write(
      `Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
  }
  process.exit(1);
});
