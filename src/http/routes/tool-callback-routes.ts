import { Router, type Request } from 'express';
import { z } from 'zod';
import { AppError } from '../../core/errors';
import { acceptRunnerReport, type RunnerReport } from '../../core/tools/accept-runner-report';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyWebhook } from '../../external/webhook-signature';
import type { HttpDeps } from '../http-deps';
import { parseOrThrow, toolRunParams } from '../request-schemas';

export const runnerProgressBody = z.object({ progress: z.number().min(0).max(1), note: z.string().max(500).optional() });
export const runnerResultBody = z.discriminatedUnion('status', [
  z.object({ status: z.literal('succeeded'), result: z.string() }),
  z.object({ status: z.literal('failed'), error: z.string().min(1).max(10_000) }),
]);

/** The raw body the JSON parser kept (the HMAC is over the bytes, not the parsed object). */
function rawBodyOf(request: Request): Buffer {
  return (request as Request & { rawBody?: Buffer }).rawBody ?? Buffer.alloc(0);
}

/**
 * External runners' callbacks: `POST /api/tool-runs/:id/progress` and `.../result`. They carry an HMAC-SHA256
 * signature (TOOL_WEBHOOK_SECRET) over the raw body instead of a bearer token; a stale timestamp, a bad signature
 * or a replayed request is 401. A repeated result is ignored (200, `duplicate: true`); a report for a run that timed
 * out or was cancelled is 409.
 */
export function toolCallbackRoutes(deps: HttpDeps): Router {
  const router = Router();
  const handle = (kind: 'progress' | 'result') => async (request: Request, response: import('express').Response) => {
    const callbacks = deps.toolCallbacks;
    if (!callbacks) throw new AppError('NOT_FOUND', 'No external tools are configured.');
    const { id } = parseOrThrow(toolRunParams, request.params, 'path');
    const check = verifyWebhook({ secret: callbacks.secret, timestamp: request.header(TIMESTAMP_HEADER), signature: request.header(SIGNATURE_HEADER), body: rawBodyOf(request) });
    if (!check.ok) throw new AppError('UNAUTHORIZED', `Invalid signature: ${check.reason}.`);
    if (!(await callbacks.remember(check.signature))) throw new AppError('UNAUTHORIZED', 'This signed request was already received: replays are refused.');
    const report: RunnerReport = kind === 'progress'
      ? { kind, ...parseOrThrow(runnerProgressBody, request.body, 'body') }
      : { kind, ...parseOrThrow(runnerResultBody, request.body, 'body') } as RunnerReport;
    const accepted = await acceptRunnerReport({ runId: id, report }, callbacks.deps);
    response.status(kind === 'progress' ? 202 : 200).json({ ok: true, duplicate: accepted.duplicate, status: accepted.run.status });
  };
  router.post('/tool-runs/:id/progress', handle('progress'));
  router.post('/tool-runs/:id/result', handle('result'));
  return router;
}
