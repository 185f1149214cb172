import { foldDecisionFor, type ContextSettings } from '../thread-context/context-settings';
import type { RecallScope, Thread, ThreadContext, TranscriptMessage, Turn } from '../domain/types';
import { toMessageDto } from '../dto/api-dto';
import type {
  ChatModelPort,
  FoldQueue,
  IdleFoldQueue,
  LogPort,
  ModelCallStore,
  NextTurn,
  ThreadEventBus,
  TurnStore,
} from '../ports';
import type { ToolKit } from '../tools/tool-kit';
import { holdsCondensedResult } from '../tools/built-in/read-tool-result';
import { offeredDefinitions } from '../tools/offered-definitions';
import { clientToolsOf, drivenByOpenAIClient } from '../context/client-instructions';
import { answerToolCalls } from './answer-tool-calls';
import { userFacingError } from './errors-for-user';
import { PromptPrefixTracker } from './prompt-prefix-tracker';
import { buildTurnPack, streamAnswer, type ActiveTurn, type StreamAnswerDeps } from './stream-answer';
import { ContextOverBudgetError } from '../context';
import type { ChatPrefix, OpenAIFunctionTool } from '../context/types';
import type { SpendGate } from '../spend-gate/spend-gate';

export interface TurnRunnerOptions {
  turns: TurnStore;
  calls: ModelCallStore;
  events: ThreadEventBus;
  chat: ChatModelPort;
  folds: FoldQueue;
  /** Where each completed turn pushes back the thread's idle fold (PROMPT_CACHE_TTL later); without it, none. */
  idleFolds?: IdleFoldQueue;
  /**
   * Titles the thread after its first exchange (core/titles), never awaited by the turn: a title job for the
   * summarizer model, or the first message's words at once (the offline model). Without it, threads keep their title.
   */
  requestTitle?: (threadId: string) => Promise<unknown>;
  /** Folds the thread synchronously (the summary job's code), used once when the provider reports an overflow. */
  foldNow: (threadId: string) => Promise<void>;
  settings: ContextSettings;
  log: LogPort;
  /** This process' lease owner id. */
  owner: string;
  /** The tools offered on every chat call; without them the model is offered none. */
  tools?: ToolKit;
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
  /** Spend limits (SPEND_LIMITS=on): calls reserve and settle (see StreamAnswerDeps.spend); the turn's end releases. */
  spend?: SpendGate;
}

class TurnCancelled extends Error {}

/** Threads whose offered tool list a runner keeps (see offeredTools). */
const MAX_KEPT_TOOL_LISTS = 10_000;

/** What the model and the user read when a chain of tool follow-ups reaches MAX_TOOL_FOLLOW_UPS. */
export function toolChainNotice(followUps: number): string {
  return (
    `Tool limit reached: the tools' results have asked for more tools ${followUps} times in a row since the user's last message ` +
    '(MAX_TOOL_FOLLOW_UPS), so this answer is written without calling tools. It uses the results so far; send a new message to continue.'
  );
}
class TurnTimedOut extends Error {}

/** Rounds of an OpenAI client's tools per turn when the deployment has no tool kit (else MAX_TOOL_ROUNDS). */
const DEFAULT_CLIENT_TOOL_ROUNDS = 8;

/**
 * Our tools offered in the thread: async ones not to an OpenAI client (it has no channel for their follow-up);
 * search_transcript described with the thread's recall scope; read_tool_result only when `readable` (a condensed
 * result's handle is in the context: holdsCondensedResult).
 */
function serverToolsFor(thread: Thread, tools: ToolKit, scope: RecallScope, readable: boolean): OpenAIFunctionTool[] {
  const registered = tools.registry.definitions();
  const driven = drivenByOpenAIClient(thread);
  // One list per registry list, scope and kind of thread, shared by every thread that gets it: the model adapter
  // keeps one bound model per list (its identity is the key), so a list built afresh per thread or turn would bind
  // the tools and build an OpenAI client again on every call (bench/README.md, "Sixth pass").
  let byKind = serverToolLists.get(registered);
  if (!byKind) {
    byKind = new Map();
    serverToolLists.set(registered, byKind);
  }
  const kind = `${scope}:${driven}:${readable}`;
  let list = byKind.get(kind);
  if (!list) {
    const definitions = offeredDefinitions(registered, scope, readable);
    list = driven
      ? definitions.filter((definition) => tools.registry.get(definition.function.name)?.mode !== 'async')
      : definitions;
    byKind.set(kind, list);
  }
  return list;
}
const serverToolLists = new WeakMap<readonly OpenAIFunctionTool[], Map<string, OpenAIFunctionTool[]>>();

type Options = Required<Omit<TurnRunnerOptions, 'tools' | 'idleFolds' | 'requestTitle' | 'spend'>> &
  Pick<TurnRunnerOptions, 'tools' | 'idleFolds' | 'requestTitle' | 'spend'>;

/** The thread's first exchange: its first user message (a branch's first one after the fork point). */
function isFirstExchange(userMessage: TranscriptMessage | null, thread: Thread): boolean {
  return userMessage?.seq != null && userMessage.seq === (thread.forkedFrom?.seq ?? 0) + 1;
}

/**
 * Runs a thread's queued turns, one at a time, under the thread's lease in Postgres (so it also holds across
 * processes), and different threads in parallel. No database transaction or pooled connection is held across
 * the model call: each write is its own short statement or transaction.
 *
 * A turn is a loop of rounds: the model answers (streamed into an assistant message); when it called tools,
 * every call is answered (inline tools run, async ones start a run and answer with its handle) and the model
 * is called again, up to the tool kit's `maxRounds`; the call after the last round sends the same tools with
 * `tool_choice: none`.
 */
export class TurnRunner {
  private readonly draining = new Map<string, Promise<void>>();
  private readonly rerun = new Set<string>();
  private readonly active = new Map<string, ActiveTurn>();
  private readonly offeredByThread = new Map<string, { epoch: string; tools: OpenAIFunctionTool[] }>();
  private readonly prompts = new PromptPrefixTracker();
  private readonly options: Options;

  constructor(options: TurnRunnerOptions) {
    this.options = {
      leaseTtlMs: 30_000,
      turnTimeoutMs: 120_000,
      maxRetries: 2,
      retryBaseMs: 500,
      streamSaveMs: 1000,
      ...options,
    };
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

  /**
   * Stops the running answer on the thread (in this process); the partial answer is kept as `cancelled`. With
   * `turnId`, only when that turn is the one running: a client that went away stops its own answer, never the next
   * turn of the thread (its own may have ended meanwhile).
   */
  cancel(threadId: string, turnId?: string): boolean {
    const active = this.active.get(threadId);
    if (!active || (turnId !== undefined && active.turnId !== turnId)) return false;
    active.controller.abort(new TurnCancelled('cancelled by the user'));
    return true;
  }

  /** The text so far of a message streaming in this process. */
  partialText(messageId: string): string | null {
    for (const active of this.active.values()) if (active.stream?.messageId === messageId) return active.stream.text;
    return null;
  }

  get activeCount(): number {
    return this.active.size;
  }

  /** Threads whose queue this process is draining: a turn running, or the lease being taken or released around it. */
  get drainingCount(): number {
    return this.draining.size;
  }

  /** Shutdown: waits for running turns up to `graceMs`, then cancels them (partial answers stored as `cancelled`). */
  async drainAll(graceMs: number): Promise<void> {
    const all = Promise.allSettled([...this.draining.values()]);
    const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs).unref());
    if ((await Promise.race([all, timer])) === 'timeout') {
      for (const active of this.active.values())
        active.controller.abort(new TurnCancelled('the server is shutting down'));
      await all;
    }
  }

  private async drain(threadId: string): Promise<void> {
    const { turns, owner, leaseTtlMs } = this.options;
    do {
      this.rerun.delete(threadId);
      // Takes the lease and starts the oldest queued turn in one round trip; with nothing queued the lease is
      // released in it too (a send committing after that finds the lease free and kicks its own runner).
      const first = await turns.nextTurn({ threadId, owner, ttlMs: leaseTtlMs });
      if (first.outcome === 'leased-elsewhere') return;
      if (first.outcome === 'started') await this.runUnderLease(threadId, first);
    } while (this.rerun.has(threadId));
  }

  /** Runs turns while the queue has some, renewing the lease meanwhile; the last step releases it. */
  private async runUnderLease(threadId: string, first: NextTurn & { outcome: 'started' }): Promise<void> {
    const { turns, owner, leaseTtlMs } = this.options;
    const renew = setInterval(
      () => {
        turns.acquireLease({ threadId, owner, ttlMs: leaseTtlMs }).then(
          (held) => {
            if (!held) this.active.get(threadId)?.controller.abort(new Error('lost the thread lease'));
          },
          (error: unknown) => this.options.log.warn({ err: error, threadId }, 'lease renewal failed'),
        );
      },
      Math.max(1000, Math.floor(leaseTtlMs / 3)),
    );
    let next: NextTurn = first;
    try {
      while (next.outcome === 'started') next = await this.runTurn(next);
    } finally {
      clearInterval(renew);
      // Left by a failure with the lease still ours: release it, and look again when a send queued meanwhile.
      if (next.outcome === 'started' && (await turns.releaseLease({ threadId, owner }))) this.rerun.add(threadId);
    }
  }

  /** Runs one started turn to its end; returns the step after it (the next turn started, or the lease released). */
  private async runTurn(started: {
    turn: Turn;
    userMessage: TranscriptMessage | null;
    context: ThreadContext;
  }): Promise<NextTurn> {
    const { turn, userMessage, context } = started;
    const { events, turns, log, owner, leaseTtlMs } = this.options;
    const threadId = turn.threadId;
    if (userMessage) events.publish({ type: 'message-created', threadId, message: toMessageDto(userMessage) });
    const active: ActiveTurn = { turnId: turn.id, controller: new AbortController(), stream: null };
    this.active.set(threadId, active);
    const timeout = setTimeout(
      () => active.controller.abort(new TurnTimedOut('turn timed out')),
      this.options.turnTimeoutMs,
    );
    const startedAt = Date.now();
    let completed: Awaited<ReturnType<TurnStore['completeTurn']>> | null = null;
    try {
      // Its client went away while it was queued: it ends here, its message in the transcript, the model never called.
      if (turn.cancelRequested) throw new TurnCancelled('the client went away before the turn started');
      await this.generate(turn, context, active);
      // The turn's end, the step to the next turn and the context after this one (the fold decision's): one round trip.
      completed = await turns.completeTurn({ turnId: turn.id, threadId, owner, ttlMs: leaseTtlMs });
      events.publish({ type: 'turn-end', threadId, turnId: turn.id, status: 'complete' });
      log.info({ threadId, turnId: turn.id, kind: turn.kind, ms: Date.now() - startedAt }, 'turn complete');
      if (completed.context) this.maybeEnqueueFold(completed.context);
    } catch (error) {
      // Once the turn is complete its step was taken too (a next turn may be running under our lease): a failure
      // after that (a listener of turn-end) is only logged.
      if (completed) log.error({ err: error, threadId, turnId: turn.id }, 'after the turn completed');
      else await this.endFailedTurn(turn, active, error);
    } finally {
      clearTimeout(timeout);
      this.active.delete(threadId);
    }
    // What the turn's reservation still holds goes back (a crashed process' is released by the sweeper).
    if (this.options.spend) await this.options.spend.endTurn(turn.id);
    // After the answer (or its failure: the question alone makes a title), never before it nor awaited.
    if (isFirstExchange(userMessage, context.thread)) this.requestTitle(threadId);
    return completed ? completed.next : turns.nextTurn({ threadId, owner, ttlMs: leaseTtlMs });
  }

  /** Rounds of model answers and tool calls until the model answers without calling a tool. */
  private async generate(turn: Turn, initial: ThreadContext, active: ActiveTurn): Promise<void> {
    const { tools } = this.options;
    const deps: StreamAnswerDeps = { ...this.options, prompts: this.prompts };
    let context = initial;
    // A follow-up's first call gets its results last; later rounds see them where they are.
    const lastSeqs = turn.kind === 'follow-up' && tools ? await tools.runs.followUpNoteSeqs(turn.id) : [];
    // A chain of tool results asking for more tools ends at MAX_TOOL_FOLLOW_UPS: this answer gets no tools, and
    // the notice that says so is in the transcript (the user reads it) and in the window (the model does).
    const chainEnded =
      turn.kind === 'follow-up' &&
      tools !== undefined &&
      (await tools.runs.followUpDepth(turn.id)) > tools.limits.followUps;
    if (chainEnded) context = (await this.appendNotice(turn, toolChainNotice(tools.limits.followUps))) ?? context;
    // Per round: a result condensed in a round brings read_tool_result into the next (see offeredTools).
    let offered = this.toolsOfCalls(context);
    const clientNames = new Set(clientToolsOf(context.thread).map((tool) => tool.function.name));
    for (let round = 0; ; round += 1) {
      // A round that must not call tools still sends the same schemas (a changed tool list is a prompt-cache miss
      // from its first token on) and says `tool_choice: none`.
      const allowCalls = offered.length > 0 && !chainEnded && round < (tools?.maxRounds ?? DEFAULT_CLIENT_TOOL_ROUNDS);
      const answer = await streamAnswer(
        {
          turn,
          context,
          active,
          tools: offered,
          ...(offered.length > 0 && !allowCalls ? { toolChoice: 'none' as const } : {}),
          ...(round === 0 ? { lastSeqs } : {}),
        },
        deps,
      );
      if (answer.toolCalls.length === 0) return;
      const serverCalls = answer.toolCalls.filter((call) => !clientNames.has(call.name));
      if (serverCalls.length > 0) {
        if (!tools) throw new Error('the model called a tool, but no tools are configured');
        await answerToolCalls(
          {
            turn,
            calls: serverCalls,
            invalid: answer.invalid,
            assistant: answer.message,
            signal: active.controller.signal,
            ownerId: context.thread.ownerId,
            offered: allowCalls ? offered.map((definition) => definition.function.name) : [],
          },
          { ...this.options, tools },
        );
        active.controller.signal.throwIfAborted();
      }
      // A client tool's call ends the answer: the client runs it and sends the result with its next request.
      if (serverCalls.length < answer.toolCalls.length) return;
      if (!allowCalls) return;
      context = (await this.options.turns.loadContext(turn.threadId, { recall: true })) ?? context;
      offered = this.toolsOfCalls(context);
    }
  }

  /**
   * The thread's chat prompt as its next call would send it, without the per-call parts (recall slot, notes), with the
   * tool list its calls are offered: what a fold continues (see continued-fold-prompt.ts). Null when the window does
   * not fit whole (the budget guard leaves messages out).
   */
  chatPrefix(context: ThreadContext): ChatPrefix | null {
    const { settings } = this.options;
    try {
      const offered = this.toolsOfCalls(context);
      const { pack, toolSchemaTokens } = buildTurnPack(context, settings, offered, [], { recall: false });
      return pack.omitted > 0
        ? null
        : { messages: pack.messages, tools: offered, tokens: pack.tokens + toolSchemaTokens };
    } catch (error) {
      if (error instanceof ContextOverBudgetError) return null;
      throw error;
    }
  }

  /**
   * Every tool a chat call of the thread is offered: ours, kept per thread until its next fold (see offeredTools),
   * then an OpenAI client's own (the /v1 route; the client runs them, see src/core/facade), from its latest request.
   */
  private toolsOfCalls(context: ThreadContext): OpenAIFunctionTool[] {
    const { tools } = this.options;
    const ours = tools ? this.offeredTools(context, tools) : [];
    const clients = clientToolsOf(context.thread);
    // The same list, not a copy, when there is nothing to add: see serverToolsFor.
    return clients.length === 0 ? ours : [...ours, ...clients];
  }

  /**
   * The tool list offered on a thread: the registry's, kept per thread until its next fold (or context reset) or a
   * change of its recall scope, so an MCP list change does not change the prompt's prefix in the middle of a cached
   * stretch. A tool gone meanwhile answers the model with an error when called. read_tool_result only while the
   * context (its entries or the summary) holds a condensed result's handle line: the one change in the middle of a
   * stretch, made by the round that got such a result, so the next can read the rest of it.
   */
  private offeredTools(context: ThreadContext, tools: ToolKit): OpenAIFunctionTool[] {
    const threadId = context.thread.id;
    const scope = context.thread.settings.recallScope ?? this.options.settings.recallScope;
    const readable = holdsCondensedResult(context);
    // A change of the recall scope changes search_transcript's description at once (the search itself changes).
    const epoch = `${context.thread.summary?.revision ?? 0}:${context.thread.contextStartSeq}:${scope}:${readable}`;
    const kept = this.offeredByThread.get(threadId);
    if (kept && kept.epoch === epoch) return kept.tools;
    const current = serverToolsFor(context.thread, tools, scope, readable);
    this.offeredByThread.delete(threadId);
    this.offeredByThread.set(threadId, { epoch, tools: current });
    // Oldest threads first out (insertion order): a bounded map.
    if (this.offeredByThread.size > MAX_KEPT_TOOL_LISTS) {
      const oldest = this.offeredByThread.keys().next().value;
      if (oldest !== undefined) this.offeredByThread.delete(oldest);
    }
    return current;
  }

  /** A complete system message of the turn, in the transcript and the window; returns the context re-read after it. */
  private async appendNotice(turn: Turn, text: string): Promise<ThreadContext | null> {
    const { turns, events, settings } = this.options;
    const started = await turns.appendTurnMessage({
      threadId: turn.threadId,
      turnId: turn.id,
      role: 'system',
      content: '',
      status: 'streaming',
    });
    const tokens = settings.counter.countMessage({ role: 'system', content: text });
    const finished = await turns.finishMessage({
      messageId: started.id,
      content: text,
      status: 'complete',
      tokens,
      encoding: settings.counter.encoding,
      entry: { role: 'system', content: text, tokens },
    });
    events.publish({ type: 'message-start', threadId: turn.threadId, message: toMessageDto(finished) });
    events.publish({ type: 'message-end', threadId: turn.threadId, message: toMessageDto(finished) });
    return turns.loadContext(turn.threadId, { recall: true });
  }

  private async endFailedTurn(turn: Turn, active: ActiveTurn, error: unknown): Promise<void> {
    const { turns, events, settings, log } = this.options;
    const threadId = turn.threadId;
    const cancelled = error instanceof TurnCancelled;
    const body =
      error instanceof TurnTimedOut
        ? {
            code: 'PROVIDER_TIMEOUT' as const,
            message: 'The answer took too long and was stopped. Your message is saved; try again.',
          }
        : userFacingError(error);
    if (!cancelled) log.warn({ err: error, threadId, turnId: turn.id, code: body.code }, 'turn failed');
    const status = cancelled ? 'cancelled' : 'error';
    let messageId = active.stream?.messageId ?? undefined;
    try {
      const stream = active.stream;
      await stream?.settled();
      // A stream that already completed its message (a failure later in the round) gets a new one for the error.
      const open = stream?.messageId && !stream.completed ? stream : null;
      const text = open?.text ?? '';
      messageId =
        open?.messageId ??
        (
          await turns.appendTurnMessage({
            threadId,
            turnId: turn.id,
            role: 'assistant',
            content: '',
            status: 'streaming',
          })
        ).id;
      const tokens = text ? settings.counter.countMessage({ role: 'assistant', content: text }) : 0;
      // A cancelled answer the user saw stays in the conversation; an errored one does not reach the model.
      const keepInContext = cancelled && text.length > 0;
      // The call that was streaming it: stored with it, so its spending counts the answer as far as it went.
      const unfinished = open && active.unfinishedCall?.messageId === messageId ? active.unfinishedCall : null;
      const call = unfinished
        ? { ...unfinished, error: cancelled ? 'cancelled' : `${body.code}: ${body.message}` }
        : null;
      const finished = await turns.finishMessage({
        messageId,
        content: text,
        status,
        tokens,
        encoding: settings.counter.encoding,
        ...(cancelled ? {} : { error: body }),
        ...(keepInContext ? { entry: { role: 'assistant', content: text, tokens } } : {}),
        ...(call ? { call } : {}),
      });
      if (call)
        await this.options.spend?.settleCall({
          turnId: turn.id,
          userId: null,
          threadId,
          call: { ...call, answerTokens: tokens },
        });
      if (!open) events.publish({ type: 'message-start', threadId, message: toMessageDto(finished) });
      events.publish({ type: 'message-end', threadId, message: toMessageDto(finished) });
      await turns.finishTurn({ turnId: turn.id, status, ...(cancelled ? {} : { error: body }) });
    } catch (storeError) {
      // The database failed too: the sweeper marks the turn interrupted once our lease expires.
      log.error({ err: storeError, threadId, turnId: turn.id }, 'could not record the end of a failed turn');
    } finally {
      // Whoever waits for this turn (sockets, REST) is told it ended, even when storing that failed.
      if (!cancelled)
        events.publish({
          type: 'turn-error',
          threadId,
          turnId: turn.id,
          ...(messageId ? { messageId } : {}),
          error: body,
        });
      events.publish({ type: 'turn-end', threadId, turnId: turn.id, status });
    }
  }

  private requestTitle(threadId: string): void {
    const { requestTitle, log } = this.options;
    requestTitle?.(threadId).catch((error: unknown) =>
      log.warn({ err: error, threadId }, 'could not title the thread'),
    );
  }

  private maybeEnqueueFold(context: ThreadContext): void {
    const { settings, folds, idleFolds, log } = this.options;
    const threadId = context.thread.id;
    // Every turn pushes back the thread's idle fold: it runs once the thread has been quiet as long as the cache lives.
    if (idleFolds && context.thread.memoryMode === 'summary') {
      idleFolds
        .scheduleIdleFold(threadId)
        .catch((error: unknown) => log.warn({ err: error, threadId }, 'could not schedule the idle fold'));
    }
    // While the thread is active, only the trigger folds.
    const decision = foldDecisionFor(context, settings);
    if (!decision.fold) return;
    // Never awaited by the turn: with Redis down the enqueue fails fast and the sweeper catches up later.
    folds
      .enqueueFold(threadId, decision.reasons.join('; '))
      .catch((error: unknown) => log.warn({ err: error, threadId }, 'could not enqueue fold; the sweeper will retry'));
  }
}
