import { AppError } from '../core/errors/app-error';
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

/** Keeps a user's token-placed spend-limit groups (SPEND_LIMIT_GROUP_CLAIM) in step with their token's claim. */
export interface ClaimGroupSync {
  syncClaimGroups(userId: string, groups: readonly string[]): Promise<void>;
}

/** What turning a token into a principal reads: the token service, the users' rows, erasures, and the group claim's store. */
export interface PrincipalDeps {
  tokens: TokenService;
  threads: ThreadStore;
  erasures: Pick<ErasureStore, 'erasureOf'>;
  /** Present when SPEND_LIMIT_GROUP_CLAIM is set and spend limits are enforced. */
  claimGroups?: ClaimGroupSync;
}

/**
 * The group set each user's memberships were last made to match, by this process: a request whose token names the
 * same groups writes nothing. Bounded like KnownUsers (cleared when full: the next requests write once more).
 */
const syncedGroups = new Map<string, string>();
const SYNCED_GROUPS_KEPT = 100_000;

/** An erased user is upserted again on its next accepted request (a host-minted id with a token issued after it). */
export function forgetKnownUser(userId: string): void {
  knownUsers.forget(userId);
}

/**
 * The principal of a bearer token. A token of an erased user is refused (UNAUTHORIZED) when it was
 * issued before the erasure, and always for a guest; a newer token of a host-minted user recreates an empty user.
 */
export async function principalFromToken(token: string | null, deps: PrincipalDeps): Promise<Principal> {
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
    // An erasure took the memberships too: made again below.
    syncedGroups.delete(principal.userId);
  }
  if (principal.groups && deps.claimGroups) {
    const key = principal.groups.join('\n');
    if (syncedGroups.get(principal.userId) !== key) {
      await deps.claimGroups.syncClaimGroups(principal.userId, principal.groups);
      if (syncedGroups.size >= SYNCED_GROUPS_KEPT) syncedGroups.clear();
      syncedGroups.set(principal.userId, key);
    }
  }
  return principal;
}
