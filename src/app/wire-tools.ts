import type { Env } from '../config/env';
import type { ContextSettings } from '../core/thread-context/context-settings';
import { recountSavedMemoryTokens, saveMemoryFromThread, type SavedMemoryDeps } from '../core/saved-memories';
import type { ToolKit, ToolRegistry, ToolServices } from '../core/tools';
import { createSavedMemoryRepository } from '../db/saved-memory-repository';
import { createToolRunRepository, createToolServices } from '../db/tool-run-repository';
import { createSharedRateLimiter } from '../jobs/redis-rate-limiter';
import { createToolProducer, type ToolProducer } from '../jobs/tool-queue';
import type { McpHub } from '../mcp';
import type { Wiring } from './application';
import type { Models } from './wire-models';
import type { Queues } from './wire-queues';
import type { Stores } from './wire-stores';
import { wireToolRegistry } from './wire-tool-registry';

/** The tools: their registry, the run store (outbox), the tools queue, and what the turn's tool rounds use. */
export interface Tools {
  registry: ToolRegistry;
  /** The MCP servers of this process (null when MCP_SERVERS is unset). */
  mcp: McpHub | null;
  toolRuns: ReturnType<typeof createToolRunRepository>;
  savedMemories: SavedMemoryDeps;
  toolServices: ToolServices;
  toolQueue: ToolProducer;
  condense: ToolKit['condense'];
  toolKit: ToolKit;
}

/** Step 4: the tool registry, the saved memories (recounted in the background), the tool services and queue. */
export async function wireTools(
  wiring: Wiring,
  { stores, models, queues }: { stores: Stores; models: Models; queues: Queues },
): Promise<Tools> {
  const { env, log, settings } = wiring;
  const { registry, mcp } = await wireToolRegistry(wiring);
  const toolRuns = createToolRunRepository(stores.db);
  const savedMemories: SavedMemoryDeps = {
    store: createSavedMemoryRepository(stores.db),
    counter: settings.counter,
    maxItems: env.MAX_MEMORY_ITEMS,
    capTokens: settings.userMemoryTokens,
    writeLimiter: createSharedRateLimiter({
      redis: queues.producerConnection,
      prefix: env.REDIS_PREFIX,
      name: 'memory-write',
      limit: env.MEMORY_WRITES_PER_MINUTE,
      log,
    }),
  };
  // Items counted for the rendering before quoted lines (migration saved_memory_status): recounted in the background.
  recountSavedMemoryTokens(savedMemories).then(
    (recounted) => {
      if (recounted > 0) log.info({ recounted }, 'recounted saved memories for the quoted rendering');
    },
    (error: unknown) => log.warn({ err: error }, 'could not recount saved memories'),
  );
  const toolServices = toolServicesOf(env, settings, stores, savedMemories);
  const toolQueue = createToolProducer({
    connection: queues.producerConnection,
    prefix: env.REDIS_PREFIX,
    onError: (error) => log.debug({ err: error }, 'tools queue error'),
  });
  queues.registry.register(toolQueue.queue);
  const condense = {
    summarizer: models.summarizer,
    calls: stores.calls,
    inlineTokens: settings.toolResultInlineTokens,
    inputMaxTokens: settings.summarizerInputMaxTokens,
  };
  const toolKit: ToolKit = {
    registry,
    runs: toolRuns,
    queue: toolQueue,
    services: toolServices,
    condense,
    maxRounds: env.MAX_TOOL_ROUNDS,
    limits: {
      callsPerMessage: env.MAX_TOOL_CALLS_PER_MESSAGE,
      followUps: env.MAX_TOOL_FOLLOW_UPS,
      asyncRunsPerThread: env.MAX_ASYNC_RUNS_PER_THREAD,
      asyncRunsPerUser: env.MAX_ASYNC_RUNS_PER_USER,
    },
    inlineTimeoutMs: Math.min(30_000, env.TOOL_TIMEOUT_MS),
    maxResultChars: env.TOOL_RESULT_MAX_CHARS,
  };
  return { registry, mcp, toolRuns, savedMemories, toolServices, toolQueue, condense, toolKit };
}

/** What tools reach besides their arguments: the database's services, search elsewhere, saving a memory. */
function toolServicesOf(
  env: Env,
  settings: ContextSettings,
  stores: Stores,
  savedMemories: SavedMemoryDeps,
): ToolServices {
  const baseToolServices = createToolServices(stores.db);
  return {
    ...baseToolServices,
    search: {
      ...baseToolServices.search,
      searchElsewhere: (input) => stores.search.searchElsewhere({ ...input, defaultScope: settings.recallScope }),
    },
    saveMemory: async (input) => {
      const status = env.SAVE_MEMORY_TOOL === 'on' ? 'active' : 'pending';
      const outcome = await saveMemoryFromThread({ ...input, status }, savedMemories);
      return 'saved' in outcome
        ? { saved: { id: outcome.saved.id, text: outcome.saved.text, status: outcome.saved.status } }
        : outcome;
    },
  };
}
