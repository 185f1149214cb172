import { Router } from 'express';
import { exportThread } from '../../core/memory';
import { listSavedMemories } from '../../core/saved-memories';
import type { Thread } from '../../core/domain/types';
import { spendOrRefuse } from '../../core/turn/spend-or-refuse';
import { principalOf } from '../authenticate';
import type { HttpDeps } from '../http-deps';
import { writeChunk } from './export-routes';
import { toSavedMemoryDto } from './saved-memory-routes';

/** Threads read per page of the export. */
const THREAD_PAGE = 50;

async function* threadsOf(deps: HttpDeps, userId: string): AsyncGenerator<Thread> {
  let cursor: string | undefined;
  for (;;) {
    const page = await deps.threads.listThreads({ ownerId: userId, limit: THREAD_PAGE, ...(cursor ? { cursor } : {}) });
    yield* page.items;
    if (!page.nextCursor) return;
    cursor = page.nextCursor;
  }
}

/**
 * The export as NDJSON lines: each thread as `{"type":"thread", ...}` in the thread export's JSON format (the
 * `chat-thread-export` object of GET /api/threads/:id/export on one line), then each saved memory as
 * `{"type":"saved-memory", ...}`, then `{"type":"end", threads, savedMemories}`.
 */
async function* accountExport(deps: HttpDeps, userId: string): AsyncGenerator<string> {
  let threads = 0;
  for await (const thread of threadsOf(deps, userId)) {
    let first = true;
    for await (const chunk of exportThread({ thread, format: 'json' }, deps.memory.exportReader)) {
      // The thread export puts each element on its own line; JSON escapes newlines inside strings, so the bare
      // newlines are only separators and one thread becomes one line.
      const flat = chunk.replace(/\n/g, '');
      yield first ? `{"type":"thread",${flat.slice(1)}` : flat;
      first = false;
    }
    yield '\n';
    threads += 1;
  }
  const items = await listSavedMemories(userId, deps.savedMemories);
  for (const item of items) yield `${JSON.stringify({ type: 'saved-memory', ...toSavedMemoryDto(item) })}\n`;
  yield `${JSON.stringify({ type: 'end', threads, savedMemories: items.length })}\n`;
}

/**
 * The caller's account: erase everything (DELETE /api/me) and export everything (GET /api/me/export), both counted
 * against the user's EXPORTS_PER_MINUTE.
 */
export function accountRoutes(deps: HttpDeps): Router {
  const router = Router();

  router.delete('/me', async (_request, response) => {
    const principal = principalOf(response);
    // An erasure walks everything the user has: counted with the exports (EXPORTS_PER_MINUTE).
    await spendOrRefuse(deps.exportLimiter, principal.userId, 'exports and erasures');
    await deps.eraseUser({ userId: principal.userId, kind: principal.kind });
    response.status(204).end();
  });

  router.get('/me/export', async (_request, response) => {
    const userId = principalOf(response).userId;
    await spendOrRefuse(deps.exportLimiter, userId, 'exports');
    response.status(200).set({
      'Content-Type': 'application/x-ndjson; charset=utf-8',
      'Content-Disposition': 'attachment; filename="account-export.ndjson"',
      'Cache-Control': 'no-store',
    });
    try {
      for await (const chunk of accountExport(deps, userId)) {
        if (!(await writeChunk(response, chunk))) return;
      }
      response.end();
    } catch (error) {
      deps.log.error({ err: error, userId }, 'account export failed');
      response.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  });

  return router;
}
