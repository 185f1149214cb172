import type { TokenCounter } from '../core/context';
import type { LogPort, TurnStore } from '../core/ports';
import { refreshTokenCounts } from '../core/thread-context/refresh-token-counts';

/**
 * The turn store as the core sees it: every context it loads has counts of the configured encoding. Stale counts
 * (left by an earlier model's encoding) are redone in memory and stored in the background, per thread.
 */
export function withFreshTokenCounts(turns: TurnStore, counter: TokenCounter, log: LogPort): TurnStore {
  const saving = new Set<string>();
  const refresh = <T extends { context: Parameters<typeof refreshTokenCounts>[0] }>(value: T): T => {
    const { context, changes } = refreshTokenCounts(value.context, counter);
    if (changes && !saving.has(changes.threadId)) {
      saving.add(changes.threadId);
      log.info(
        { threadId: changes.threadId, entries: changes.entries.length, encoding: changes.encoding },
        'recounting tokens made with another encoding',
      );
      turns
        .saveTokenCounts(changes)
        .catch((error: unknown) =>
          log.warn({ err: error, threadId: changes.threadId }, 'could not store recounted tokens'),
        )
        .finally(() => saving.delete(changes.threadId));
    }
    return { ...value, context };
  };
  return {
    ...turns,
    async loadContext(threadId, options) {
      const context = await turns.loadContext(threadId, options);
      return context ? refresh({ context }).context : null;
    },
    async nextTurn(input) {
      const next = await turns.nextTurn(input);
      return next.outcome === 'started' ? refresh(next) : next;
    },
    async completeTurn(input) {
      const completed = await turns.completeTurn(input);
      return {
        ...completed,
        context: completed.context ? refresh({ context: completed.context }).context : null,
        next: completed.next.outcome === 'started' ? refresh(completed.next) : completed.next,
      };
    },
  };
}
