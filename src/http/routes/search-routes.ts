import { createHash } from 'node:crypto';
import { Router } from 'express';
import { AppError } from '../../core/errors/app-error';
import { toSearchHitDto } from '../../core/dto/api-dto';
import type { SearchPageDto } from '../../shared/api';
import { principalOf } from '../authenticate';
import type { HttpDeps } from '../http-deps';
import { parseOrThrow, searchQuery } from '../request-schemas';
import { ownThread } from './thread-routes';

/** Deepest hit a page may start at: ranked paging re-ranks every skipped hit, so very deep pages are refused. */
export const SEARCH_MAX_OFFSET = 1000;

/** A cursor names the next page's offset and the search it belongs to (a hash of the thread scope and query). */
function searchKey(query: string, threadId: string | undefined): string {
  return createHash('sha256')
    .update(`${threadId ?? '*'}\n${query}`)
    .digest('base64url')
    .slice(0, 10);
}

export function encodeSearchCursor(offset: number, query: string, threadId?: string): string {
  return Buffer.from(`${offset}.${searchKey(query, threadId)}`).toString('base64url');
}

/** The offset a cursor of `encodeSearchCursor` names; anything else (or another search's cursor) is VALIDATION (400). */
export function decodeSearchCursor(cursor: string, query: string, threadId?: string): number {
  const [offsetText, key, ...rest] = Buffer.from(cursor, 'base64url').toString().split('.');
  const offset = Number(offsetText);
  if (rest.length > 0 || !/^\d{1,5}$/.test(offsetText ?? '') || offset < 1 || offset > SEARCH_MAX_OFFSET) {
    throw new AppError('VALIDATION', 'Invalid cursor: pass the nextCursor of the previous page unchanged.');
  }
  if (key !== searchKey(query, threadId))
    throw new AppError('VALIDATION', 'Invalid cursor: it belongs to another search (pass the same q).');
  return offset;
}

/** People's transcript search: one thread, or all of the caller's threads. Hits are complete, live messages only. */
export function searchRoutes(deps: HttpDeps): Router {
  const router = Router();

  /** A valid request, counted against the user's SEARCH_PER_MINUTE before it reads anything. */
  async function admitted(userId: string, request: { query: unknown }) {
    const parsed = parseOrThrow(searchQuery, request.query, 'search');
    const decision = await deps.searchLimiter.hit(userId);
    if (!decision.allowed) {
      throw new AppError('RATE_LIMITED', `Too many searches; try again in ${decision.retryAfterSeconds} s.`, {
        details: { retryAfterSeconds: decision.retryAfterSeconds },
      });
    }
    return parsed;
  }

  async function page(input: {
    ownerId: string;
    threadId?: string;
    parsed: { q: string; cursor?: string | undefined; limit: number };
  }): Promise<SearchPageDto> {
    const { q, cursor, limit } = input.parsed;
    const offset = cursor === undefined ? 0 : decodeSearchCursor(cursor, q, input.threadId);
    const { hits, hasMore } = await deps.search.searchForPeople({
      ownerId: input.ownerId,
      query: q,
      limit,
      offset,
      ...(input.threadId ? { threadId: input.threadId } : {}),
    });
    const next = offset + hits.length;
    return {
      hits: hits.map(toSearchHitDto),
      nextCursor: hasMore && next <= SEARCH_MAX_OFFSET ? encodeSearchCursor(next, q, input.threadId) : null,
    };
  }

  router.get('/search', async (request, response) => {
    const userId = principalOf(response).userId;
    const parsed = await admitted(userId, request);
    response.json(await page({ ownerId: userId, parsed }));
  });

  router.get('/threads/:id/search', async (request, response) => {
    const userId = principalOf(response).userId;
    const parsed = await admitted(userId, request);
    const thread = await ownThread(deps, request.params.id, userId);
    response.json(await page({ ownerId: userId, threadId: thread.id, parsed }));
  });

  return router;
}
