import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { AppError } from '../../core/errors/app-error';
import { acceptRunnerReport, type RunnerReport } from '../../core/tools/accept-runner-report';
import { checkJsonBody } from '../json-body-checks';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyWebhook } from '../../external/webhook-signature';
import type { RateLimiter } from '../../core/limits/rate-limiter';
import { clientKeyOf } from '../client-address';
import { withFailureLimit } from '../failed-auth-limit';
import type { HttpDeps, ToolCallbackDeps } from '../http-deps';
import { parseOrThrow, toolRunParams } from '../request-schemas';

/** TOOL_RESULT_MAX_CHARS' default, for the OpenAPI document. */
const DOCUMENTED_RESULT_MAX_CHARS = 2_000_000;

export const runnerProgressBody = z.object({
  progress: z.number().min(0).max(1),
  note: z.string().max(500).optional(),
});

/** A runner's result: `result` at most TOOL_RESULT_MAX_CHARS characters (a longer one is 400, not cut). */
export function runnerResultBodyOf(maxResultChars: number) {
  return z.discriminatedUnion('status', [
    z.object({
      status: z.literal('succeeded'),
      result: z.string().max(maxResultChars).describe('At most TOOL_RESULT_MAX_CHARS characters'),
    }),
    z.object({ status: z.literal('failed'), error: z.string().min(1).max(10_000) }),
  ]);
}
export const runnerResultBody = runnerResultBodyOf(DOCUMENTED_RESULT_MAX_CHARS);

/** The callback paths, as mounted under the app (their own body parser is mounted on them). */
export const TOOL_CALLBACK_PATHS = ['/api/tool-runs/:id/progress', '/api/tool-runs/:id/result'];

/**
 * The callbacks' own JSON parser, mounted before the `/api` one: sized to a result of TOOL_RESULT_MAX_CHARS
 * characters (each escaped as \uXXXX in the worst case) instead of the message limit, keeping the raw bytes the
 * signature is checked over. Before the body is read, a request is refused (401, its connection closed) without the
 * signature headers or when its run is one no runner serves (no secret can have signed it); an address past
 * AUTH_FAILURE_LIMIT_PER_MINUTE failed callbacks gets 429. Only a plausible callback waits for its body.
 */
export function toolCallbackBodyParser(input: {
  callbacks: ToolCallbackDeps;
  failures: RateLimiter;
}): RequestHandler[] {
  const beforeBody: RequestHandler = (request, response, next) => {
    if (request.method !== 'POST') {
      next();
      return;
    }
    refuseBeforeBody(request, input).then(
      () => next(),
      (error: unknown) => {
        response.setHeader('Connection', 'close');
        next(error);
      },
    );
  };
  const parser = express.json({
    limit: input.callbacks.deps.maxResultChars * 6 + 16_384,
    strict: true,
    verify: (request, _response, buffer) => {
      checkJsonBody(buffer);
      (request as { rawBody?: Buffer }).rawBody = buffer;
    },
  });
  return [beforeBody, parser];
}

async function refuseBeforeBody(
  request: Request,
  input: { callbacks: ToolCallbackDeps; failures: RateLimiter },
): Promise<void> {
  if (!request.header(TIMESTAMP_HEADER) || !request.header(SIGNATURE_HEADER))
    throw new AppError(
      'UNAUTHORIZED',
      `Invalid signature: the ${TIMESTAMP_HEADER} and ${SIGNATURE_HEADER} headers are required.`,
    );
  await withFailureLimit(input.failures, clientKeyOf(request), async () => {
    const runId = toolRunParams.safeParse({ id: request.params.id });
    if (!runId.success || !(await secretOfRun(input.callbacks, runId.data.id))) throw noRunnerAccepts();
  });
}

const noRunnerAccepts = () =>
  new AppError('UNAUTHORIZED', 'Invalid signature: no external tool run accepts this request.');

/** The secret of the runner of a run (null: no such run, or one of a tool no runner serves). */
async function secretOfRun(callbacks: ToolCallbackDeps, runId: string): Promise<string | null> {
  const run = await callbacks.deps.runs.findRun(runId, null);
  return run ? callbacks.secretFor(run.name) : null;
}

/** The raw body the JSON parser kept (the HMAC is over the bytes, not the parsed object). */
function rawBodyOf(request: Request): Buffer {
  return (request as Request & { rawBody?: Buffer }).rawBody ?? Buffer.alloc(0);
}

/** Checks the callback's v2 signature with the secret of the run's own runner; the run's tool names the runner. */
async function verifiedCallback(
  callbacks: ToolCallbackDeps,
  request: Request,
  runId: string,
  kind: 'progress' | 'result',
): Promise<string> {
  const secret = await secretOfRun(callbacks, runId);
  // An unknown run, or one of a tool no runner serves, is refused as unsigned: no secret can have signed it.
  if (!secret) throw noRunnerAccepts();
  const check = verifyWebhook({
    secret,
    timestamp: request.header(TIMESTAMP_HEADER),
    signature: request.header(SIGNATURE_HEADER),
    method: request.method,
    path: `${callbacks.basePath}/api/tool-runs/${runId}/${kind}`,
    runId,
    body: rawBodyOf(request),
  });
  if (!check.ok) throw new AppError('UNAUTHORIZED', `Invalid signature: ${check.reason}.`);
  return check.signature;
}

/**
 * External runners' callbacks: `POST /api/tool-runs/:id/progress` and `.../result`. They carry an HMAC-SHA256
 * signature (runner protocol v2: over method, path, run id and raw body, with the secret of the run's runner) instead
 * of a bearer token; a stale timestamp, a bad signature, another runner's secret or a replayed request is 401. A
 * signature counts as used only once its report was accepted: a refused report (409, 400, 500) can be sent again. A
 * repeated result is ignored (200, `duplicate: true`); a report for a run that timed out or was cancelled is 409.
 */
export function toolCallbackRoutes(deps: HttpDeps): Router {
  const router = Router();
  const handle = (kind: 'progress' | 'result') => async (request: Request, response: Response) => {
    const callbacks = deps.toolCallbacks;
    if (!callbacks) throw new AppError('NOT_FOUND', 'No external tools are configured.');
    const { id } = parseOrThrow(toolRunParams, request.params, 'path');
    // A bad signature counts toward the address's failed credentials, as a bad token does.
    const signature = await withFailureLimit(deps.rateLimits.authFailures, clientKeyOf(request), () =>
      verifiedCallback(callbacks, request, id, kind),
    );
    // Claimed while this report is handled (a concurrent copy is a replay); released when it is refused.
    if (!(await callbacks.remember(signature)))
      throw new AppError('UNAUTHORIZED', 'This signed request was already received: replays are refused.');
    try {
      const report: RunnerReport =
        kind === 'progress'
          ? { kind, ...parseOrThrow(runnerProgressBody, request.body, 'body') }
          : ({
              kind,
              ...parseOrThrow(runnerResultBodyOf(callbacks.deps.maxResultChars), request.body, 'body'),
            } as RunnerReport);
      const accepted = await acceptRunnerReport({ runId: id, report }, callbacks.deps);
      response
        .status(kind === 'progress' ? 202 : 200)
        .json({ ok: true, duplicate: accepted.duplicate, status: accepted.run.status });
    } catch (error) {
      await callbacks.forget(signature);
      throw error;
    }
  };
  router.post('/tool-runs/:id/progress', handle('progress'));
  router.post('/tool-runs/:id/result', handle('result'));
  return router;
}
