import { Router, type RequestHandler } from 'express';
import {
  addSavedMemory,
  approveSavedMemory,
  deleteSavedMemory,
  dismissSavedMemory,
  editSavedMemory,
  listSavedMemories,
  type SavedMemoryView,
} from '../../core/saved-memories';
import { AppError } from '../../core/errors/app-error';
import type { SavedMemoryDto, SavedMemoryListDto } from '../../shared/api';
import { bearerToken, type Principal } from '../../auth/token-service';
import { principalOf } from '../authenticate';
import type { HttpDeps } from '../http-deps';
import { facadePrincipal, isServiceKey } from '../openai-facade/facade-principal';
import { parseOrThrow, savedMemoryBody } from '../request-schemas';

/** A saved memory as clients see it. */
export function toSavedMemoryDto(view: SavedMemoryView): SavedMemoryDto {
  return {
    id: view.id,
    text: view.text,
    source: view.source,
    inContext: view.inContext,
    status: view.status,
    createdAt: view.createdAt.toISOString(),
    updatedAt: view.updatedAt.toISOString(),
  };
}

/** Where /api/memory is mounted: the one /api route a service key may call. */
export const SAVED_MEMORY_PATH = '/api/memory';

/**
 * /api/memory's own authentication, before the API's: a service key of OPENAI_FACADE_KEYS acts for the end user its
 * `X-User-Id` names (the user /v1 stores for that key and end user), so a host application can show its users their
 * saved memories and proposals. Any other bearer token goes on to the API's authentication. Nowhere else in /api is
 * a service key accepted.
 */
export function savedMemoryServiceKeyAuth(deps: HttpDeps): RequestHandler {
  return (request, response, next) => {
    const token = bearerToken(request.headers.authorization);
    const keys = deps.facade?.serviceKeys ?? [];
    if (!token || !isServiceKey(token, keys)) {
      next();
      return;
    }
    if (typeof request.headers['x-user-id'] !== 'string' || request.headers['x-user-id'].trim() === '') {
      next(
        new AppError('VALIDATION', 'A service key acts for an end user here: name them with the X-User-Id header.', {
          details: { field: 'X-User-Id' },
        }),
      );
      return;
    }
    facadePrincipal(request, { ...deps, serviceKeys: keys }).then((found) => {
      const principal: Principal = { userId: found.userId, role: 'user', kind: 'external', expiresAt: Infinity };
      response.locals.principal = principal;
      next();
    }, next);
  };
}

/**
 * The caller's saved memories (issue 27): list, add, edit, delete, and approve or dismiss the model's proposals
 * (SAVE_MEMORY_TOOL=confirm); writes count against MEMORY_WRITES_PER_MINUTE.
 */
export function savedMemoryRoutes(deps: HttpDeps): Router {
  const router = Router();

  router.get('/memory', async (_request, response) => {
    const body: SavedMemoryListDto = {
      items: (await listSavedMemories(principalOf(response).userId, deps.savedMemories)).map(toSavedMemoryDto),
    };
    response.json(body);
  });

  router.post('/memory', async (request, response) => {
    const { text } = parseOrThrow(savedMemoryBody, request.body ?? {}, 'saved memory');
    const view = await addSavedMemory({ userId: principalOf(response).userId, text }, deps.savedMemories);
    response.status(201).json(toSavedMemoryDto(view));
  });

  router.patch('/memory/:id', async (request, response) => {
    const { text } = parseOrThrow(savedMemoryBody, request.body ?? {}, 'saved memory');
    const view = await editSavedMemory(
      { userId: principalOf(response).userId, id: request.params.id, text },
      deps.savedMemories,
    );
    response.json(toSavedMemoryDto(view));
  });

  router.delete('/memory/:id', async (request, response) => {
    await deleteSavedMemory({ userId: principalOf(response).userId, id: request.params.id }, deps.savedMemories);
    response.status(204).end();
  });

  router.post('/memory/:id/approve', async (request, response) => {
    const view = await approveSavedMemory(
      { userId: principalOf(response).userId, id: request.params.id },
      deps.savedMemories,
    );
    response.json(toSavedMemoryDto(view));
  });

  router.post('/memory/:id/dismiss', async (request, response) => {
    await dismissSavedMemory({ userId: principalOf(response).userId, id: request.params.id }, deps.savedMemories);
    response.status(204).end();
  });

  return router;
}
