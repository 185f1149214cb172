import type { SocketServer } from '../realtime/create-socket-server';
import type { Application, ApplicationOptions, Wiring } from './application';
import { contextSettingsFromEnv } from './context-settings-from-env';
import { stopApplication } from './shutdown';
import { wireHttp } from './wire-http';
import { wireHttpDeps } from './wire-http-deps';
import { wireLimits } from './wire-limits';
import { wireModels } from './wire-models';
import { wireQueues } from './wire-queues';
import { wireStores } from './wire-stores';
import { wireTools } from './wire-tools';
import { wireTurns } from './wire-turns';
import { wireWorkers } from './wire-workers';

export type { Application, ApplicationOptions, ProcessMode } from './application';

/**
 * The composition root: the one place where adapters are wired to the core, in steps (each a file of src/app):
 * stores, models, queues, tools, turns, workers, limits and HTTP deps, HTTP and sockets; `stop` undoes them in
 * shutdown.ts' order.
 */
export async function createApplication(options: ApplicationOptions): Promise<Application> {
  const { env, log, mode, tuning = {} } = options;
  const settings = contextSettingsFromEnv(env);
  // Load the tokenizer's ranks now (about a second) rather than on the first user's message.
  settings.counter.countText('warm up');
  const wiring: Wiring = { options, env, log, mode, tuning, settings };
  const { stores, observed, spend } = await wireStores(wiring);
  const models = await wireModels(wiring, { stores });
  const queues = wireQueues(wiring, { stores, observed, models });
  const tools = await wireTools(wiring, { stores, models, queues });
  const turns = wireTurns(wiring, { stores, observed, spend, models, queues, tools });
  const workers = wireWorkers(wiring, {
    stores,
    observed,
    spend,
    queues,
    tools,
    turns,
    // The HTTP deps' eraseUser, built below (the sweeper calls it only once started).
    eraseGuest: (userId) => deps.eraseUser({ userId, kind: 'guest' }),
  });
  const limits = wireLimits(wiring, { queues, spend });
  // Bound once the socket server exists (it is built from these deps).
  const sockets: { server: SocketServer | null } = { server: null };
  const deps = wireHttpDeps(wiring, { stores, observed, spend, models, queues, tools, turns, limits, sockets });
  const web = await wireHttp(wiring, { deps, observed, tools, limits, sockets });

  const { server } = web;
  const { sweeper } = workers;
  let stopped = false;
  return {
    app: web.app,
    server,
    db: stores.db,
    runner: turns.runner,
    sweeper,
    spend,
    folds: queues.folds,
    toolQueue: tools.toolQueue,
    worker: workers.worker,
    toolWorker: workers.toolWorker,
    deps,
    io: web.io,
    queues: queues.registry,
    metrics: observed.metrics,
    mcp: tools.mcp,
    metricsPort: web.metricsServer?.port ?? null,
    async listen(port, host = env.HOST) {
      await web.io?.announced();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve());
      });
      sweeper.start();
      const address = server.address();
      return typeof address === 'object' && address ? address.port : port;
    },
    async stop(graceMs = env.SHUTDOWN_GRACE_MS) {
      if (stopped) return;
      stopped = true;
      await stopApplication({ log, stores, observed, queues, tools, turns, workers, web }, graceMs);
    },
  };
}
