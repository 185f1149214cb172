import type { Response } from 'express';
import type { HttpDeps } from '../http-deps';
import { principalOf } from '../authenticate';

/**
 * Audits an admin acting through a user route on another user's thread (an admin JWT may export, forget, pin,
 * reset, regenerate or change settings on any thread): recorded in the same audit trail as /api/admin actions,
 * with the owner and `via: "user-route"`. Called after the action succeeded; a user acting on their own thread
 * (admin or not) is not audited.
 */
export async function auditAdminOverride(
  deps: Pick<HttpDeps, 'threads' | 'admin'>,
  response: Response,
  input: { threadId: string; action: string; ownerId?: string; details?: Record<string, unknown> },
): Promise<void> {
  const principal = principalOf(response);
  if (principal.role !== 'admin') return;
  const ownerId = input.ownerId ?? (await deps.threads.findThread(input.threadId, null))?.ownerId;
  if (ownerId === undefined || ownerId === principal.userId) return;
  await deps.admin.audit.record({
    actor: principal.userId,
    action: input.action,
    threadId: input.threadId,
    details: { ...input.details, ownerId, via: 'user-route' },
  });
}
