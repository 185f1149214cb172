import { AppError } from '../core/errors';
import { refusedAfterErasure } from '../core/erasure';
import type { ErasureStore, ThreadStore } from '../core/ports';
import type { Principal, TokenService } from './token-service';

/**
 * Users already upserted by this process: the first request of a user creates its row, later ones skip it. Each is
 * kept with the time of the erasure its row was stored after (null: never erased), as the tombstone says it: a newer
 * erasure, by any process, has the row stored again once, then requests skip it again.
 */
export class KnownUsers {
  private readonly stored = new Map<string, number | null>();

  constructor(private readonly capacity = 100_000) {}

  /** Whether the user's row must be stored (again) before the request goes on, given their tombstone. */
  needsRow(userId: string, erasure: { erasedAt: Date } | null): boolean {
    if (!this.stored.has(userId)) return true;
    const storedAfter = this.stored.get(userId) ?? null;
    return erasure !== null && erasure.erasedAt.getTime() !== storedAfter;
  }

  /** The user's row is stored, after `erasure` (their tombstone when it was read). */
  remember(userId: string, erasure: { erasedAt: Date } | null): void {
    if (this.stored.size >= this.capacity) this.stored.clear();
    this.stored.set(userId, erasure ? erasure.erasedAt.getTime() : null);
  }

  forget(userId: string): void {
    this.stored.delete(userId);
  }
}

const knownUsers = new KnownUsers();

/** An erased user is upserted again on its next accepted request (a host-minted id with a token issued after it). */
export function forgetKnownUser(userId: string): void {
  knownUsers.forget(userId);
}

/**
 * The principal of a bearer token. A token of an erased user is refused (UNAUTHORIZED) when it was
 * issued before the erasure, and always for a guest; a newer token of a host-minted user recreates an empty user.
 */
export async function principalFromToken(
  token: string | null,
  deps: { tokens: TokenService; threads: ThreadStore; erasures: Pick<ErasureStore, 'erasureOf'> },
): Promise<Principal> {
  if (!token) throw new AppError('UNAUTHORIZED', 'A bearer token is required.');
  const principal = await deps.tokens.verify(token);
  const erasure = await deps.erasures.erasureOf(principal.userId);
  if (refusedAfterErasure(erasure, { issuedAtMs: principal.issuedAt ?? 0, kind: principal.kind })) {
    throw new AppError('UNAUTHORIZED', 'This account was erased; sign in again.');
  }
  // Known from before an erasure (in this process or another): stored again, once.
  if (knownUsers.needsRow(principal.userId, erasure)) {
    await deps.threads.ensureUser(principal.userId, principal.kind);
    knownUsers.remember(principal.userId, erasure);
  }
  return principal;
}
