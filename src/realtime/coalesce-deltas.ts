import type { ThreadEvent } from '../shared/events';

type DeltaEvent = Extract<ThreadEvent, { type: 'message-delta' }>;

/** How long deltas of a message may wait to share a socket frame, by default. */
export const DEFAULT_COALESCE_MS = 50;

interface ThreadState {
  /** The deltas waiting, all of one message, contiguous from `offset`. */
  pending: { messageId: string; offset: number; parts: string[]; length: number } | null;
  timer: ReturnType<typeof setTimeout> | null;
  /** When this thread's last delta frame went out (`now()`), -Infinity before the first. */
  lastEmitAt: number;
}

export interface DeltaCoalescer {
  /** Takes every thread event in publish order; calls `emit` with what goes out, in the same order. */
  push(event: ThreadEvent): void;
  /** Sends what a thread has waiting now (a tab joining reads the text so far right after). */
  flush(threadId: string): void;
  /** Sends everything waiting and stops the timers. */
  flushAll(): void;
}

/**
 * Coalesces a streaming message's deltas into fewer socket frames: each frame costs the server a write per tab,
 * whatever its size. A delta goes out at once when its thread sent none in the last `windowMs`; later ones wait
 * until `windowMs` after that frame and go out together as one `message-delta` whose `offset` is the first one's
 * and whose `delta` is their text joined: the same text, at the same offsets, in fewer frames. Any other event of
 * the thread (`message-end`, `turn-end`, tool events...) first sends what waits, so the order of events holds.
 * `windowMs: 0` sends every delta as it comes.
 */
export function createDeltaCoalescer(options: {
  windowMs: number;
  emit: (event: ThreadEvent) => void;
  now?: () => number;
}): DeltaCoalescer {
  const { windowMs, emit } = options;
  const now = options.now ?? (() => performance.now());
  const threads = new Map<string, ThreadState>();

  const send = (threadId: string, state: ThreadState) => {
    if (state.timer) clearTimeout(state.timer);
    state.timer = null;
    const pending = state.pending;
    if (!pending) return;
    state.pending = null;
    state.lastEmitAt = now();
    emit({
      type: 'message-delta',
      threadId,
      messageId: pending.messageId,
      offset: pending.offset,
      delta: pending.parts.join(''),
    });
  };

  const onDelta = (event: DeltaEvent) => {
    let state = threads.get(event.threadId);
    if (!state) {
      state = { pending: null, timer: null, lastEmitAt: Number.NEGATIVE_INFINITY };
      threads.set(event.threadId, state);
    }
    const pending = state.pending;
    // Only text that continues the waiting text joins it (another message, or a restart at offset 0, does not).
    if (pending && (pending.messageId !== event.messageId || pending.offset + pending.length !== event.offset))
      send(event.threadId, state);
    if (!state.pending && now() - state.lastEmitAt >= windowMs) {
      state.lastEmitAt = now();
      emit(event);
      return;
    }
    if (state.pending) {
      state.pending.parts.push(event.delta);
      state.pending.length += event.delta.length;
    } else {
      state.pending = {
        messageId: event.messageId,
        offset: event.offset,
        parts: [event.delta],
        length: event.delta.length,
      };
    }
    if (!state.timer) {
      const thread = state;
      thread.timer = setTimeout(() => send(event.threadId, thread), Math.max(0, thread.lastEmitAt + windowMs - now()));
      thread.timer.unref();
    }
  };

  return {
    push(event) {
      if (event.type === 'message-delta') {
        onDelta(event);
        return;
      }
      const state = threads.get(event.threadId);
      if (state) {
        send(event.threadId, state);
        // The message or turn moved on: the next delta needs no wait (and an idle thread keeps no state).
        threads.delete(event.threadId);
      }
      emit(event);
    },
    flush(threadId) {
      const state = threads.get(threadId);
      if (state) send(threadId, state);
    },
    flushAll() {
      for (const [threadId, state] of threads) send(threadId, state);
      threads.clear();
    },
  };
}
