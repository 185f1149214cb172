import type { ToolCall } from '../context';
import type { ContextSettings } from '../thread-context/context-settings';
import type { TranscriptMessage, Turn } from '../domain/types';
import { toMessageDto } from '../dto/api-dto';
import type { LogPort, ThreadEventBus, ToolRun, TurnStore } from '../ports';
import { condenseToolResult, truncateResult } from '../tools/condense-tool-result';
import { executeTool, validateArguments } from '../tools/execute-tool';
import { AsyncRunCapReached } from '../tools/async-run-cap';
import { toToolRunDto } from '../tools/to-tool-run-dto';
import type { ToolKit } from '../tools/tool-kit';

export interface AnswerToolCallsDeps {
  turns: TurnStore;
  events: ThreadEventBus;
  log: LogPort;
  settings: ContextSettings;
  tools: ToolKit;
}

interface Answer {
  /** What the transcript keeps (the full result, bounded by TOOL_RESULT_MAX_CHARS). */
  transcript: string;
  /** What the context gets (condensed when large). */
  context: string;
  run?: { run: ToolRun; message: TranscriptMessage };
}

function startedText(run: ToolRun): string {
  return `Started ${run.name} in the background as run ${run.id} (its handle). The result will arrive in this conversation when it is done; meanwhile, tell the user it is running.`;
}

/**
 * Answers every tool call of an assistant message, so the message order stays valid: one tool message per call,
 * appended in call order, each with its context entry. Inline tools run concurrently under the turn's signal;
 * an async call writes its persistent run (the outbox row) and is answered at once with its handle; the runs are
 * enqueued after all answers are stored. Nothing here throws for a tool's sake: failures become answers.
 */
export async function answerToolCalls(
  input: {
    turn: Turn;
    calls: ToolCall[];
    invalid: ReadonlyMap<string, string>;
    assistant: TranscriptMessage;
    signal: AbortSignal;
    /** The thread's owner, whose async runs are capped across threads. */
    ownerId: string;
    /**
     * The names of the tools offered with this answer: a model that calls another one anyway (none offered, or one
     * left out by TOOL_SCHEMA_MAX_TOKENS) is told no.
     */
    offered: readonly string[];
  },
  deps: AnswerToolCallsDeps,
): Promise<void> {
  const { turn } = input;
  const refused = await refusedCalls(input, deps);
  const notes: string[] = [];
  const messages: TranscriptMessage[] = [];
  for (const call of input.calls) {
    messages.push(
      await deps.turns.appendTurnMessage({
        threadId: turn.threadId,
        turnId: turn.id,
        role: 'tool',
        content: '',
        status: 'streaming',
        toolCallId: call.id,
      }),
    );
  }
  const answers = await Promise.all(
    input.calls.map(async (call, index): Promise<Answer> => {
      const message = messages[index];
      if (!message) throw new Error('tool message missing');
      const refusal = refused.get(call.id);
      const answering =
        refusal !== undefined
          ? Promise.resolve({ transcript: refusal, context: refusal })
          : answerOne({ ...input, call, message, notes }, deps);
      const answer = await answering.catch((error: unknown): Answer => {
        deps.log.warn({ err: error, threadId: turn.threadId, tool: call.name }, 'answering a tool call failed');
        const text = `Error: ${call.name} could not be run (${error instanceof Error ? error.message : String(error)}).`;
        return { transcript: text, context: text };
      });
      await finishToolMessage({ message, answer, call }, deps);
      return answer;
    }),
  );
  for (const note of notes) await announce({ turn, note }, deps);
  for (const { run } of answers) if (run) await startRun(run, deps);
}

/** A tool's note for people (e.g. a saved memory): a system message of the transcript with no context entry. */
async function announce(input: { turn: Turn; note: string }, deps: AnswerToolCallsDeps): Promise<void> {
  const { turn, note } = input;
  const message = await deps.turns.appendTurnMessage({
    threadId: turn.threadId,
    turnId: turn.id,
    role: 'system',
    content: '',
    status: 'streaming',
  });
  const finished = await deps.turns.finishMessage({
    messageId: message.id,
    content: note,
    status: 'complete',
    tokens: 0,
    encoding: deps.settings.counter.encoding,
  });
  deps.events.publish({ type: 'message-start', threadId: turn.threadId, message: toMessageDto(message) });
  deps.events.publish({ type: 'message-end', threadId: turn.threadId, message: toMessageDto(finished) });
}

/**
 * The calls this answer may not run, with what the model and the user are told: past MAX_TOOL_CALLS_PER_MESSAGE,
 * any call when no tools were offered, a registered tool that was not offered with this answer, and async calls past the running-runs caps of the thread and the user
 * (slots go to the calls in the order the model made them).
 */
async function refusedCalls(
  input: { turn: Turn; calls: ToolCall[]; ownerId: string; offered: readonly string[] },
  deps: AnswerToolCallsDeps,
): Promise<Map<string, string>> {
  const { limits } = deps.tools;
  const refused = new Map<string, string>();
  const asyncCalls: ToolCall[] = [];
  const offered = new Set(input.offered);
  input.calls.forEach((call, index) => {
    if (offered.size === 0) {
      refused.set(
        call.id,
        'Not run: no tools are offered for this answer (the tool limit of this request is reached). Answer the user with the results you already have.',
      );
    } else if (!offered.has(call.name) && deps.tools.registry.get(call.name) !== undefined) {
      // Registered but not offered (past TOOL_SCHEMA_MAX_TOKENS): the model guessed its name; it does not run.
      refused.set(
        call.id,
        `Not run: ${call.name} is not one of the tools offered with this answer. Use only the tools you were given.`,
      );
    } else if (index >= limits.callsPerMessage) {
      refused.set(
        call.id,
        `Not run: one answer may make at most ${limits.callsPerMessage} tool calls (MAX_TOOL_CALLS_PER_MESSAGE). Answer with the results you have, or call it in your next answer.`,
      );
    } else if (deps.tools.registry.get(call.name)?.mode === 'async') {
      asyncCalls.push(call);
    }
  });
  if (asyncCalls.length === 0) return refused;
  const active = await deps.tools.runs.activeRunCounts({ threadId: input.turn.threadId, ownerId: input.ownerId });
  const threadRoom = limits.asyncRunsPerThread - active.thread;
  const userRoom = limits.asyncRunsPerUser - active.user;
  asyncCalls.forEach((call, index) => {
    if (index < Math.min(threadRoom, userRoom)) return;
    refused.set(call.id, capRefusal(index >= threadRoom ? 'thread' : 'user', limits));
  });
  return refused;
}

/** What the model and the user are told of an async call past a running-runs cap. */
function capRefusal(which: 'thread' | 'user', limits: AnswerToolCallsDeps['tools']['limits']): string {
  const why =
    which === 'thread'
      ? `this conversation already has ${limits.asyncRunsPerThread} background tool runs going, the most at once (MAX_ASYNC_RUNS_PER_THREAD)`
      : `this user already has ${limits.asyncRunsPerUser} background tool runs going, the most at once (MAX_ASYNC_RUNS_PER_USER)`;
  return `Not run: ${why}. Tell the user to wait for them to finish, then ask again.`;
}

async function answerOne(
  input: {
    turn: Turn;
    call: ToolCall;
    message: TranscriptMessage;
    invalid: ReadonlyMap<string, string>;
    assistant: TranscriptMessage;
    signal: AbortSignal;
    ownerId: string;
    notes: string[];
  },
  deps: AnswerToolCallsDeps,
): Promise<Answer> {
  const { call, turn } = input;
  const { tools, settings } = deps;
  const invalid = input.invalid.get(call.id);
  if (invalid !== undefined) {
    const text = `Error: the arguments of this ${call.name} call were not valid JSON (${invalid}). Call it again with a JSON object.`;
    return { transcript: text, context: text };
  }
  const tool = tools.registry.get(call.name);
  if (tool?.mode === 'async') {
    const validated = validateArguments(tool, call.args);
    if (!validated.ok) return { transcript: `Error: ${validated.error}`, context: `Error: ${validated.error}` };
    // The check above is a first pass; the store counts again under the owner's lock, so turns of one user in
    // several threads cannot all pass it at once.
    const created = await tools.runs
      .createRun({
        threadId: turn.threadId,
        messageId: input.assistant.id,
        toolCallId: call.id,
        name: call.name,
        args: call.args,
        startedAtSeq: input.assistant.seq ?? 0,
        caps: {
          ownerId: input.ownerId,
          perThread: tools.limits.asyncRunsPerThread,
          perUser: tools.limits.asyncRunsPerUser,
        },
      })
      .catch((error: unknown) => {
        if (error instanceof AsyncRunCapReached) return error;
        throw error;
      });
    if (created instanceof AsyncRunCapReached) {
      const text = capRefusal(created.which, tools.limits);
      return { transcript: text, context: text };
    }
    return { transcript: startedText(created.run), context: startedText(created.run), run: created };
  }
  const outcome = await executeTool({
    registry: tools.registry,
    call,
    signal: input.signal,
    timeoutMs: tool?.timeoutMs ?? tools.inlineTimeoutMs,
    log: deps.log,
    context: {
      threadId: turn.threadId,
      runId: null,
      reportProgress: async () => undefined,
      services: tools.services,
      counter: settings.counter,
      inlineTokens: tools.condense.inlineTokens,
      now: () => new Date(),
      announce: (text) => {
        input.notes.push(text);
      },
    },
  });
  const transcript = truncateResult(outcome.text, tools.maxResultChars);
  if (tool?.condense === false || outcome.status !== 'succeeded') return { transcript, context: transcript };
  // Inline results are condensed here, before the model's next call.
  const condensed = await condenseToolResult(
    { threadId: turn.threadId, toolName: call.name, handle: input.message.id, text: transcript, signal: input.signal },
    { ...tools.condense, counter: settings.counter, log: deps.log },
  );
  return { transcript, context: condensed.content };
}

async function finishToolMessage(
  input: { message: TranscriptMessage; answer: Answer; call: ToolCall },
  deps: AnswerToolCallsDeps,
): Promise<void> {
  const { counter } = deps.settings;
  const { answer, call } = input;
  const entryTokens = counter.countMessage({ role: 'tool', content: answer.context, toolCallId: call.id });
  const finished = await deps.turns.finishMessage({
    messageId: input.message.id,
    content: answer.transcript,
    status: 'complete',
    encoding: counter.encoding,
    tokens:
      answer.transcript === answer.context
        ? entryTokens
        : counter.countMessage({ role: 'tool', content: answer.transcript, toolCallId: call.id }),
    entry: { role: 'tool', content: answer.context, toolCallId: call.id, tokens: entryTokens },
  });
  deps.events.publish({ type: 'message-end', threadId: finished.threadId, message: toMessageDto(finished) });
}

async function startRun(
  { run, message }: { run: ToolRun; message: TranscriptMessage },
  deps: AnswerToolCallsDeps,
): Promise<void> {
  // The run's own transcript message (no seq until the result lands) shows its progress.
  deps.events.publish({ type: 'message-start', threadId: run.threadId, message: toMessageDto(message) });
  deps.events.publish({ type: 'tool-start', threadId: run.threadId, run: toToolRunDto(run) });
  // The run row is the outbox: with Redis down the sweeper enqueues it later.
  await deps.tools.queue
    .enqueueToolRun(run.id)
    .catch((error: unknown) =>
      deps.log.warn({ err: error, runId: run.id }, 'could not enqueue a tool run; the sweeper will'),
    );
}
