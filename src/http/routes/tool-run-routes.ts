import { Router } from 'express';
import { AppError } from '../../core/errors/app-error';
import { cancelToolRun } from '../../core/tools/cancel-tool-run';
import { toToolRunDto } from '../../core/tools/to-tool-run-dto';
import { principalOf } from '../authenticate';
import type { HttpDeps } from '../http-deps';
import { parseOrThrow, toolRunParams } from '../request-schemas';

/** Async tool runs: their state, and cancel. Another user's run is a 404, like a missing one. */
export function toolRunRoutes(deps: HttpDeps): Router {
  const router = Router();

  router.get('/tool-runs/:id', async (request, response) => {
    const { id } = parseOrThrow(toolRunParams, request.params, 'path');
    const run = await deps.toolRuns.findRun(id, principalOf(response).userId);
    if (!run) throw new AppError('NOT_FOUND', 'No such tool run.');
    response.json(toToolRunDto(run));
  });

  router.post('/tool-runs/:id/cancel', async (request, response) => {
    const { id } = parseOrThrow(toolRunParams, request.params, 'path');
    const cancelled = await cancelToolRun(
      { runId: id, userId: principalOf(response).userId },
      { runs: deps.toolRuns, queue: deps.toolQueue, log: deps.log },
    );
    if (!cancelled) throw new AppError('CONFLICT', 'The run has already finished.');
    response.status(202).json(toToolRunDto(cancelled));
  });

  return router;
}
