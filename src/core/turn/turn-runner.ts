import { buildContextPack } from '../context';
import { shouldFold } from '../context';
import type { ContextEntry } from '../context';
import { contextStateOf, policiesFor, type ContextSettings } from '../context-settings';
import type { ThreadContext, TranscriptMessage, Turn } from '../domain';
import { toMessageDto } from '../dto';
import { isModelCallError, ModelCallError } from '../model-call-error';
import type { ChatModelPort, FoldQueue, LogPort, ModelCallStore, ThreadEventBus, TurnStore } from '../ports';
import { userFacingError } from './errors-for-user';

export interface TurnRunnerOptions {
  turns: TurnStore;
  calls: ModelCallStore;
  events: ThreadEventBus;
  chat: ChatModelPort;
  folds: FoldQueue;
  /** Folds the thread synchronously (the summary job's code), used once when the provider reports an overflow. */
  foldNow: (threadId: string) => Promise<void>;
  settings: ContextSettings;
  log: LogPort;
  /** This process' lease owner id. */
  owner: string;
  /** Lease lifetime; renewed every third of it while a turn runs. Default 30 s. */
  leaseTtlMs?: number;
  /** TURN_TIMEOUT_MS, default 120 s. */
  turnTimeoutMs?: number;
  /** Bounded retries of retryable provider errors before the first token. Default 2. */
  maxRetries?: number;
  /** First backoff step; doubles each retry (a provider's retry-after wins). Default 500 ms. */
  retryBaseMs?: number;
  /** How often the text of a streaming message is saved while it streams. Default 1 s. */
  streamSaveMs?: number;
}

interface ActiveTurn {
  turnId: string;
  controller: AbortController;
  messageId: string | null;
  text: string;
}

class TurnCancelled extends Error {}
class TurnTimedOut extends Error {}

const sleep = (ms: number, signal?: AbortSignal) => new Promise<void>((resolve) => {
  const timer = setTimeout(resolve, ms);
  signal?.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
});

/**
 * Runs a thread's queued turns, one at a time, under the thread's lease in Postgres (so it also holds across
 * processes), and different threads in parallel. No database transaction or pooled connection is held across
 * the model call: each write is its own short statement or transaction.
 */
export class TurnRunner {
  private readonly draining = new Map<string, Promise<void>>();
  private readonly rerun = new Set<string>();
  private readonly active = new Map<string, ActiveTurn>();
  private readonly options: Required<Omit<TurnRunnerOptions, 'foldNow'>> & Pick<TurnRunnerOptions, 'foldNow'>;

  constructor(options: TurnRunnerOptions) {
    this.options = { leaseTtlMs: 30_000, turnTimeoutMs: 120_000, maxRetries: 2, retryBaseMs: 500, streamSaveMs: 1000, ...options };
  }

  /** Runs whatever is queued on the thread, unless this process already is; resolves when the queue is empty. */
  kick(threadId: string): Promise<void> {
    const running = this.draining.get(threadId);
    if (running) {
      this.rerun.add(threadId);
      return running;
    }
    const drain = this.drain(threadId)
      .catch((error: unknown) => this.options.log.error({ err: error, threadId }, 'turn queue failed'))
      .finally(() => this.draining.delete(threadId));
    this.draining.set(threadId, drain);
    return drain;
  }

  /** Stops the running answer on the thread (in this process); the partial answer is kept as `cancelled`. */
  cancel(threadId: string): boolean {
    const active = this.active.get(threadId);
    if (!active) return false;
    active.controller.abort(new TurnCancelled('cancelled by the user'));
    return true;
  }

  /** The text so far of a message streaming in this process. */
  partialText(messageId: string): string | null {
    for (const active of this.active.values()) if (active.messageId === messageId) return active.text;
    return null;
  }

  get activeCount(): number {
    return this.active.size;
  }

  /** Shutdown: waits for running turns up to `graceMs`, then cancels them (partial answers stored as `cancelled`). */
  async drainAll(graceMs: number): Promise<void> {
    const all = Promise.allSettled([...this.draining.values()]);
    const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs).unref());
    if ((await Promise.race([all, timer])) === 'timeout') {
      for (const active of this.active.values()) active.controller.abort(new TurnCancelled('the server is shutting down'));
      await all;
    }
  }

  private async drain(threadId: string): Promise<void> {
    const { turns, owner, leaseTtlMs } = this.options;
    do {
      this.rerun.delete(threadId);
      if (!(await turns.acquireLease({ threadId, owner, ttlMs: leaseTtlMs }))) return;
      const renew = setInterval(() => {
        turns.acquireLease({ threadId, owner, ttlMs: leaseTtlMs }).then((held) => {
          if (!held) this.active.get(threadId)?.controller.abort(new Error('lost the thread lease'));
        }, (error: unknown) => this.options.log.warn({ err: error, threadId }, 'lease renewal failed'));
      }, Math.max(1000, Math.floor(leaseTtlMs / 3)));
      try {
        for (;;) {
          const started = await turns.startNextTurn({ threadId, owner });
          if (!started) break;
          await this.runTurn(started);
        }
      } finally {
        clearInterval(renew);
        await turns.releaseLease({ threadId, owner });
      }
      // A send that arrived while we held the lease could not take it: look once more after releasing.
      if (await turns.hasQueuedTurns(threadId)) this.rerun.add(threadId);
    } while (this.rerun.has(threadId));
  }

  private async runTurn(started: { turn: Turn; userMessage: TranscriptMessage | null; context: ThreadContext }): Promise<void> {
    const { turn, userMessage, context } = started;
    const { events, turns, log } = this.options;
    const threadId = turn.threadId;
    if (userMessage) events.publish({ type: 'message-created', threadId, message: toMessageDto(userMessage) });
    const active: ActiveTurn = { turnId: turn.id, controller: new AbortController(), messageId: null, text: '' };
    this.active.set(threadId, active);
    const timeout = setTimeout(() => active.controller.abort(new TurnTimedOut('turn timed out')), this.options.turnTimeoutMs);
    const startedAt = Date.now();
    try {
      const window = await this.generate(turn, context, active);
      await turns.finishTurn({ turnId: turn.id, status: 'complete' });
      events.publish({ type: 'turn-end', threadId, turnId: turn.id, status: 'complete' });
      log.info({ threadId, turnId: turn.id, ms: Date.now() - startedAt }, 'turn complete');
      this.maybeEnqueueFold({ ...context, window });
    } catch (error) {
      await this.endFailedTurn(turn, active, error);
    } finally {
      clearTimeout(timeout);
      this.active.delete(threadId);
    }
  }

  /** Streams the answer into a new assistant message; returns the window as it is after the turn. */
  private async generate(turn: Turn, initial: ThreadContext, active: ActiveTurn): Promise<ContextEntry[]> {
    const { settings, chat, turns, events } = this.options;
    const threadId = turn.threadId;
    let context = initial;
    let overflowRetried = false;
    for (let attempt = 0; ; attempt += 1) {
      const pack = buildContextPack({ systemPrefix: settings.systemPrefix, state: contextStateOf(context), budget: settings.budget, counter: settings.counter, compat: settings.compat });
      const callStarted = Date.now();
      try {
        const result = await chat.stream({
          messages: pack.messages,
          signal: active.controller.signal,
          onDelta: (delta) => this.onDelta(turn, active, delta),
        });
        const message = await this.ensureAssistantMessage(turn, active);
        const entryTokens = settings.counter.countMessage({ role: 'assistant', content: active.text });
        const finished = await turns.finishMessage({
          messageId: message, content: active.text, status: 'complete', tokens: entryTokens, encoding: settings.counter.encoding,
          entry: { role: 'assistant', content: active.text, tokens: entryTokens },
        });
        await this.recordCall({ threadId, messageId: finished.id, pack, startedAt: callStarted, usage: result.usage, overflowRetry: overflowRetried });
        events.publish({ type: 'message-end', threadId, message: toMessageDto(finished) });
        return [...context.window, { seq: finished.seq ?? 0, role: 'assistant', content: active.text, tokens: entryTokens }];
      } catch (error) {
        const reason: unknown = active.controller.signal.aborted ? active.controller.signal.reason : error;
        // Once any text reached the viewers (its message may still be being created), a retry would repeat it.
        if (active.messageId !== null || active.text.length > 0 || active.controller.signal.aborted) throw reason;
        await this.recordCall({ threadId, messageId: null, pack, startedAt: callStarted, usage: null, overflowRetry: overflowRetried, error: reason });
        if (isModelCallError(reason) && reason.kind === 'context_overflow' && !overflowRetried) {
          overflowRetried = true;
          this.options.log.warn({ threadId, turnId: turn.id }, 'provider reported context overflow: folding now and retrying once');
          await this.options.foldNow(threadId);
          context = (await turns.loadContext(threadId)) ?? context;
          continue;
        }
        if (isModelCallError(reason) && reason.retryable && attempt < this.options.maxRetries) {
          const wait = reason.retryAfterMs ?? this.options.retryBaseMs * 2 ** attempt;
          await sleep(Math.min(wait, 30_000), active.controller.signal);
          if (active.controller.signal.aborted) throw active.controller.signal.reason;
          continue;
        }
        throw reason;
      }
    }
  }

  private onDelta(turn: Turn, active: ActiveTurn, delta: string): void {
    if (!delta) return;
    const offset = active.text.length;
    active.text += delta;
    const publish = (messageId: string) => this.options.events.publish({ type: 'message-delta', threadId: turn.threadId, messageId, offset, delta });
    if (active.messageId) {
      publish(active.messageId);
      this.saveThrottled(active);
    } else {
      // The first token creates the message; deltas that arrive meanwhile are buffered in `text`.
      void this.ensureAssistantMessage(turn, active).then(() => undefined, () => undefined);
    }
  }

  private creating = new Map<ActiveTurn, Promise<string>>();
  private lastSave = new WeakMap<ActiveTurn, number>();

  /** Creates the streaming assistant message once; publishes message-start and the text buffered so far. */
  private ensureAssistantMessage(turn: Turn, active: ActiveTurn): Promise<string> {
    if (active.messageId) return Promise.resolve(active.messageId);
    let creating = this.creating.get(active);
    if (!creating) {
      creating = (async () => {
        const message = await this.options.turns.appendTurnMessage({ threadId: turn.threadId, turnId: turn.id, role: 'assistant', content: '', status: 'streaming' });
        active.messageId = message.id;
        this.lastSave.set(active, Date.now());
        this.options.events.publish({ type: 'message-start', threadId: turn.threadId, message: toMessageDto(message) });
        if (active.text) this.options.events.publish({ type: 'message-delta', threadId: turn.threadId, messageId: message.id, offset: 0, delta: active.text });
        return message.id;
      })().finally(() => this.creating.delete(active));
      this.creating.set(active, creating);
    }
    return creating;
  }

  private saveThrottled(active: ActiveTurn): void {
    const now = Date.now();
    if (!active.messageId || now - (this.lastSave.get(active) ?? 0) < this.options.streamSaveMs) return;
    this.lastSave.set(active, now);
    this.options.turns.saveStreamingText(active.messageId, active.text).catch((error: unknown) => this.options.log.warn({ err: error }, 'saving streaming text failed'));
  }

  private async endFailedTurn(turn: Turn, active: ActiveTurn, error: unknown): Promise<void> {
    const { turns, events, settings, log } = this.options;
    const threadId = turn.threadId;
    const cancelled = error instanceof TurnCancelled;
    const body = error instanceof TurnTimedOut
      ? { code: 'PROVIDER_TIMEOUT' as const, message: 'The answer took too long and was stopped. Your message is saved; try again.' }
      : userFacingError(error);
    if (!cancelled) log.warn({ err: error, threadId, turnId: turn.id, code: body.code }, 'turn failed');
    const status = cancelled ? 'cancelled' : 'error';
    let messageId = active.messageId ?? undefined;
    try {
      // Wait for a message creation still in flight, so the partial text lands on it.
      const creating = this.creating.get(active);
      if (creating) await creating.catch(() => undefined);
      messageId = active.messageId
        ?? (await turns.appendTurnMessage({ threadId, turnId: turn.id, role: 'assistant', content: '', status: 'streaming' })).id;
      const tokens = active.text ? settings.counter.countMessage({ role: 'assistant', content: active.text }) : 0;
      // A cancelled answer the user saw stays in the conversation; an errored one does not reach the model.
      const keepInContext = cancelled && active.text.length > 0;
      const finished = await turns.finishMessage({
        messageId, content: active.text, status, tokens, encoding: settings.counter.encoding,
        ...(cancelled ? {} : { error: body }),
        ...(keepInContext ? { entry: { role: 'assistant', content: active.text, tokens } } : {}),
      });
      if (!active.messageId) events.publish({ type: 'message-start', threadId, message: toMessageDto(finished) });
      events.publish({ type: 'message-end', threadId, message: toMessageDto(finished) });
      await turns.finishTurn({ turnId: turn.id, status, ...(cancelled ? {} : { error: body }) });
    } catch (storeError) {
      // The database failed too: the sweeper marks the turn interrupted once our lease expires.
      log.error({ err: storeError, threadId, turnId: turn.id }, 'could not record the end of a failed turn');
    } finally {
      // Whoever waits for this turn (sockets, REST) is told it ended, even when storing that failed.
      if (!cancelled) events.publish({ type: 'turn-error', threadId, turnId: turn.id, ...(messageId ? { messageId } : {}), error: body });
      events.publish({ type: 'turn-end', threadId, turnId: turn.id, status });
    }
  }

  private maybeEnqueueFold(context: ThreadContext): void {
    const { settings, folds, log } = this.options;
    const { trigger } = policiesFor(context, settings);
    const decision = shouldFold(contextStateOf(context), trigger, settings.profile);
    if (!decision.fold) return;
    const threadId = context.thread.id;
    // Never awaited by the turn: with Redis down the enqueue fails fast and the sweeper catches up later.
    folds.enqueueFold(threadId, decision.reasons.join('; ')).catch((error: unknown) => log.warn({ err: error, threadId }, 'could not enqueue fold; the sweeper will retry'));
  }

  private async recordCall(input: { threadId: string; messageId: string | null; pack: ReturnType<typeof buildContextPack>; startedAt: number; usage: { promptTokens: number; completionTokens: number } | null; overflowRetry: boolean; error?: unknown }): Promise<void> {
    const { pack } = input;
    try {
      await this.options.calls.record({
        threadId: input.threadId,
        messageId: input.messageId,
        purpose: 'chat',
        model: this.options.chat.model,
        estimatedPromptTokens: pack.tokens,
        reportedPromptTokens: input.usage?.promptTokens ?? null,
        reportedCompletionTokens: input.usage?.completionTokens ?? null,
        latencyMs: Date.now() - input.startedAt,
        summaryRevision: pack.manifest.summaryRevision,
        windowFromSeq: pack.manifest.windowFromSeq,
        windowThroughSeq: pack.manifest.windowThroughSeq,
        pinnedSeqs: pack.manifest.pinnedSeqs,
        omitted: pack.omitted,
        overflowRetry: input.overflowRetry,
        error: input.error ? (input.error instanceof ModelCallError ? `${input.error.kind}: ${input.error.message}` : String(input.error)) : null,
      });
    } catch (error) {
      this.options.log.warn({ err: error }, 'could not record the model call');
    }
  }
}
