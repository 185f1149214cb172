import type { Redis } from 'ioredis';

/** The signatures of external runners' callbacks seen lately, shared by every serve process through Redis. */
export interface SignatureReplayStore {
  /** Remembers a signature for `ttlMs`; false when it was already remembered (a replay). */
  remember(signature: string): Promise<boolean>;
  /** Forgets a remembered signature (its report was refused: the runner may send it again). */
  forget(signature: string): Promise<void>;
}

/**
 * A signature is accepted once while its timestamp is valid: `SET NX` with an expiry of `ttlMs` (twice the
 * signature tolerance covers a timestamp from the past and from the future), under `<prefix>:tool-signature:`.
 */
export function createSignatureReplayStore(options: {
  redis: Redis;
  prefix: string;
  ttlMs: number;
}): SignatureReplayStore {
  const { redis, prefix, ttlMs } = options;
  const keyOf = (signature: string) => `${prefix}:tool-signature:${signature}`;
  return {
    async remember(signature) {
      return (await redis.set(keyOf(signature), '1', 'PX', ttlMs, 'NX')) === 'OK';
    },
    async forget(signature) {
      await redis.del(keyOf(signature));
    },
  };
}
