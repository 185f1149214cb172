import type { ModelCallStore } from '../ports';
import type { SpendGate } from './spend-gate';

/**
 * The model-call store with every call that is not a turn's chat call (folds, condensing, titles, a /v1 client's
 * background requests) counted against its user's (else its thread owner's) spend limit once recorded: counted, never
 * refused. A turn's chat calls are settled by the turn itself (stream-answer), which holds their reservation.
 */
export function countBackgroundCalls(calls: ModelCallStore, spend: SpendGate): ModelCallStore {
  return {
    ...calls,
    async record(call) {
      await calls.record(call);
      if (call.purpose === 'chat') return;
      await spend.settleCall({ turnId: null, userId: call.userId ?? null, threadId: call.threadId, call });
    },
  };
}
