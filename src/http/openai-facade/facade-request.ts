import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { AppError } from '../../core/errors/app-error';
import type { FacadeHttpDeps } from './facade-deps';
import { MODEL_NOT_FOUND } from './openai-errors';

/** Longest conversation key a client may send (X-Thread-Id and the like). */
export const MAX_CLIENT_KEY_CHARS = 200;

/** The response header carrying our thread id (open it in the web app). */
export const THREAD_ID_HEADER = 'X-Chat-Thread-Id';

/**
 * The conversation a request names: the first of FACADE_THREAD_HEADERS it carries (an opaque key of the client), or,
 * without one, a key derived from its first user message (best effort).
 */
export function conversationOf(
  request: Request,
  headers: readonly string[],
  firstUserMessage: string,
): { key: string; explicit: boolean } {
  for (const name of headers) {
    const value = request.headers[name];
    if (typeof value !== 'string' || value.trim() === '') continue;
    const key = value.trim();
    if (key.length > MAX_CLIENT_KEY_CHARS)
      throw new AppError('VALIDATION', `${name}: at most ${MAX_CLIENT_KEY_CHARS} characters.`, {
        details: { field: name },
      });
    return { key: `id:${key}`, explicit: true };
  }
  return { key: `first:${createHash('sha256').update(firstUserMessage.trim()).digest('hex')}`, explicit: false };
}

/** A 404 model_not_found unless the model is one this server serves (CHAT_MODEL or an alias). */
export function checkModel(model: string, facade: Pick<FacadeHttpDeps, 'models'>): void {
  if (facade.models.includes(model)) return;
  throw new AppError(
    'NOT_FOUND',
    `The model "${model}" does not exist here; GET /v1/models lists the models this server serves.`,
    { details: { field: 'model', openaiCode: MODEL_NOT_FOUND } },
  );
}
