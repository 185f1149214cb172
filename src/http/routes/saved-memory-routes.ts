import { Router } from 'express';
import {
  addSavedMemory,
  deleteSavedMemory,
  editSavedMemory,
  listSavedMemories,
  type SavedMemoryView,
} from '../../core/saved-memories';
import type { SavedMemoryDto, SavedMemoryListDto } from '../../shared/api';
import { principalOf } from '../authenticate';
import type { HttpDeps } from '../http-deps';
import { parseOrThrow, savedMemoryBody } from '../request-schemas';

/** A saved memory as clients see it. */
export function toSavedMemoryDto(view: SavedMemoryView): SavedMemoryDto {
  return {
    id: view.id,
    text: view.text,
    source: view.source,
    inContext: view.inContext,
    createdAt: view.createdAt.toISOString(),
    updatedAt: view.updatedAt.toISOString(),
  };
}

/** The caller's saved memories (issue 27): list, add, edit, delete; writes count against MEMORY_WRITES_PER_MINUTE. */
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

  return router;
}
