import { Router, type Response } from 'express';
import { exportThread, threadForActor } from '../../core/memory';
import { spendOrRefuse } from '../../core/turn/spend-or-refuse';
import { principalOf } from '../authenticate';
import type { HttpDeps } from '../http-deps';
import { exportThreadQuery, parseOrThrow, threadIdParams } from '../request-schemas';
import { auditAdminOverride } from './audit-admin-override';
import { memoryActorOf } from './memory-routes';

/** Resolves on `drain` or `close`, removing both listeners either way. */
function drainedOrClosed(response: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

/** Writes a chunk; waits for `drain` when the socket's buffer is full (false when the client went away). */
export async function writeChunk(response: Response, chunk: string): Promise<boolean> {
  if (response.destroyed) return false;
  if (response.write(chunk)) return true;
  await drainedOrClosed(response);
  return !response.destroyed;
}

/** GET /api/threads/:id/export?format=json|markdown: streamed, a page of rows at a time, with backpressure. */
export function exportRoutes(deps: HttpDeps): Router {
  const router = Router();
  router.get('/threads/:id/export', async (request, response) => {
    const { id } = parseOrThrow(threadIdParams, request.params, 'path');
    const { format } = parseOrThrow(exportThreadQuery, request.query, 'query');
    const thread = await threadForActor(deps.memory, id, memoryActorOf(response));
    await spendOrRefuse(deps.exportLimiter, principalOf(response).userId, 'exports');
    await auditAdminOverride(deps, response, {
      threadId: thread.id,
      ownerId: thread.ownerId,
      action: 'thread.exported',
      details: { format },
    });
    response.status(200).set({
      'Content-Type': format === 'json' ? 'application/json; charset=utf-8' : 'text/markdown; charset=utf-8',
      'Content-Disposition': `attachment; filename="thread-${thread.id}.${format === 'json' ? 'json' : 'md'}"`,
      'Cache-Control': 'no-store',
    });
    try {
      for await (const chunk of exportThread({ thread, format }, deps.memory.exportReader)) {
        if (!(await writeChunk(response, chunk))) return;
      }
      response.end();
    } catch (error) {
      // The status is sent: a truncated body is all that can signal the failure.
      deps.log.error({ err: error, threadId: thread.id }, 'export failed');
      response.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  });
  return router;
}
