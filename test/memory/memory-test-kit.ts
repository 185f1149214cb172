import type { Queue } from 'bullmq';
import pg from 'pg';
import { IDLE_FOLD_JOB } from '../../src/jobs/queue-names';
import { expect } from 'vitest';
import type {
  ContextPackDto,
  MessageDto,
  SendMessageResponseDto,
  ThreadDetailDto,
  ThreadDto,
} from '../../src/shared/api';
import type { ThreadEvent } from '../../src/shared/events';
import type { TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/** An app and a guest's token: a `ChatServer` (test/support/chat-server.ts), read when a helper runs. */
export interface KitTarget {
  readonly app: TestApp;
  readonly token: string;
}

/**
 * REST helpers of the memory-control tests, bound to one app and one token: `memoryKit(server)` with the shared
 * fixture (it may be called before the server started), or `memoryKit(app, token)`.
 */
export function memoryKit(target: TestApp | KitTarget, guestToken?: string) {
  if ('application' in target && guestToken === undefined)
    throw new Error('memoryKit(app, token): the token is missing');
  const bound: KitTarget = 'application' in target ? { app: target, token: guestToken ?? '' } : target;
  const api: TestApp['api'] = (pathName, init = {}) => bound.app.api(pathName, { ...init, token: bound.token });
  const json = async <T>(response: Response, status: number): Promise<T> => {
    const text = await response.text();
    expect(response.status, text).toBe(status);
    return JSON.parse(text) as T;
  };
  const kit = {
    get token() {
      return bound.token;
    },
    async createThread(title = 'memory'): Promise<ThreadDto> {
      return json<ThreadDto>(await api('/api/threads', { method: 'POST', json: { title } }), 201);
    },
    async send(threadId: string, content: string): Promise<SendMessageResponseDto> {
      const body = await json<SendMessageResponseDto>(
        await api(`/api/threads/${threadId}/messages`, { method: 'POST', json: { content } }),
        201,
      );
      expect(body.turn.status).toBe('complete');
      return body;
    },
    async detail(threadId: string): Promise<ThreadDetailDto> {
      return json<ThreadDetailDto>(await api(`/api/threads/${threadId}`), 200);
    },
    async context(threadId: string): Promise<ContextPackDto> {
      return json<ContextPackDto>(await api(`/api/threads/${threadId}/context`), 200);
    },
    async transcript(threadId: string): Promise<MessageDto[]> {
      return (await json<{ messages: MessageDto[] }>(await api(`/api/threads/${threadId}/messages?limit=200`), 200))
        .messages;
    },
    /** Waits until the summary covers `seq` and no fold is due or running. */
    async waitForFoldThrough(threadId: string, seq: number): Promise<void> {
      await waitFor(
        async () => {
          const detail = await kit.detail(threadId);
          return detail.context.coveredThroughSeq >= seq && !detail.context.foldPending;
        },
        { timeoutMs: 30_000, what: `a fold through #${seq}` },
      );
      await waitForIdleSummaryQueue(bound.app);
    },
  };
  return kit;
}

/** Waits until the summary queue has nothing waiting, running or delayed. */
/**
 * The text of a context preview's leading system message as the model gets it after the system prompt: the preview
 * splits that message into the system prompt (hidden from owners) and what follows it (saved memories, summary).
 */
export function leadingText(pack: ContextPackDto): string {
  const leading: string[] = [];
  for (const message of pack.messages) {
    if (message.role !== 'system' || message.seq !== undefined) break;
    leading.push(message.content);
  }
  return leading.join('\n\n');
}

export async function waitForIdleSummaryQueue(app: TestApp): Promise<void> {
  await waitFor(
    async () => {
      const { queue } = app.application.folds;
      const counts = await queue.getJobCounts('active', 'waiting', 'prioritized');
      // A thread's idle fold waits PROMPT_CACHE_TTL (minutes) after its last turn: not work the queue has to do now.
      const delayed = await queue.getJobs(['delayed']);
      return Object.values(counts).every((count) => count === 0) && delayed.every((job) => job.name === IDLE_FOLD_JOB);
    },
    { timeoutMs: 30_000, what: 'the summary queue to be idle' },
  );
}

/** Records the thread events published on the app's bus (what the socket server forwards to the thread's room). */
export function recordEvents(app: TestApp, threadId: string): { events: ThreadEvent[]; stop(): void } {
  const events: ThreadEvent[] = [];
  const stop = app.application.deps.events.subscribe(threadId, (event) => events.push(event));
  return { events, stop };
}

/** One query against the app's database. */
export async function query<T extends pg.QueryResultRow>(
  app: TestApp,
  sql: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: app.databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * The jobs of the summary and tools queues, in any state, whose payload names one of the threads or runs, as
 * `queue:name:state` (e.g. `summary:idle-fold:delayed`).
 */
export async function jobsNaming(
  app: TestApp,
  threadIds: readonly string[],
  runIds: readonly string[] = [],
): Promise<string[]> {
  const { folds, toolQueue } = app.application;
  const found: string[] = [];
  for (const queue of [folds.queue, toolQueue.queue] as Queue[]) {
    for (const job of await queue.getJobs([
      'waiting',
      'prioritized',
      'delayed',
      'active',
      'waiting-children',
      'completed',
      'failed',
    ])) {
      const data = job.data as { threadId?: string; runId?: string };
      if (threadIds.includes(data.threadId ?? '') || runIds.includes(data.runId ?? ''))
        found.push(`${queue.name}:${job.name}:${await job.getState()}`);
    }
  }
  return found;
}

/** A bearer token of an admin (a JWT with role admin, as a host application mints it). */
export function adminToken(app: TestApp, userId = 'admin-1'): Promise<string> {
  return app.application.deps.tokens.sign({ userId, role: 'admin', kind: 'external' });
}
