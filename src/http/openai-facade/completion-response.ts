import type { Request, Response } from 'express';
import type { Turn } from '../../core/domain/types';
import { AppError } from '../../core/errors/app-error';
import { ANSWER_PART_SEPARATOR, isAnswerNote, joinAnswerParts } from '../../core/facade/client-view';
import type { ThreadEvent } from '../../shared/events';
import type { HttpDeps } from '../http-deps';
import { turnEnded } from '../turn-ended';
import { toAppError } from '../../errors/to-app-error';
import { openAIUsage, openCompletionStream, type OpenAIUsage } from './completion-stream';
import type { FacadeHttpDeps } from './facade-deps';
import { toOpenAIError } from './openai-errors';

/** The turn a request queued, and the model name it asked for (answered back as OpenAI does). */
export interface CompletionTarget {
  model: string;
  turn: Turn;
  threadId: string;
}

const ENDED = new Set(['complete', 'error', 'cancelled']);

/** Kicks this process' runner and waits for the turn's end (as the REST send does), listening meanwhile. */
export async function runAndWait(
  deps: HttpDeps,
  turn: Turn,
  response: Response,
  onEvent?: (event: ThreadEvent) => void,
): Promise<void> {
  // Not `fresh`: the sweeper of any process may have run the turn while the request stored the client's settings.
  const waiter = turnEnded(deps, turn, onEvent);
  response.on('close', () => waiter.stop());
  try {
    const drained = deps.runner.kick(turn.threadId).then(async () => {
      if (waiter.ended) return;
      const current = await deps.turns.findTurn(turn.id);
      if (current && ENDED.has(current.status)) return;
      await waiter.done;
    });
    await Promise.race([waiter.done, drained]);
  } finally {
    waiter.stop();
  }
}

/** A client tool call as OpenAI answers it. */
export interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** The turn's answer as the client sees it (its text, and the client tools it called), or why there is none. */
export async function outcomeOf(
  deps: HttpDeps,
  facade: FacadeHttpDeps,
  turnId: string,
): Promise<{ content: string; toolCalls: OpenAIToolCall[] }> {
  const [turn, messages] = await Promise.all([deps.turns.findTurn(turnId), deps.transcript.listTurnMessages(turnId)]);
  if (!turn) throw new AppError('NOT_FOUND', 'The conversation is gone (was the thread deleted?).');
  if (turn.status === 'error')
    throw new AppError(
      turn.error?.code === undefined ? 'PROVIDER_ERROR' : (turn.error.code as never),
      turn.error?.message ?? 'The answer failed.',
    );
  if (turn.status === 'cancelled')
    throw new AppError('UNAVAILABLE', 'The answer was stopped (the server is restarting); send the request again.', {
      details: { retryAfterSeconds: 2 },
    });
  if (turn.status !== 'complete')
    throw new AppError('PROVIDER_TIMEOUT', 'The answer is taking too long; it will still appear in the thread.');
  const parts = messages.filter(
    (message) =>
      (message.role === 'assistant' &&
        !message.superseded &&
        (message.status === 'complete' || message.status === 'cancelled')) ||
      (isAnswerNote(message) && !message.superseded),
  );
  const ours = facade.serverToolNames();
  const toolCalls = (parts.filter((message) => message.role === 'assistant').at(-1)?.toolCalls ?? [])
    .filter((call) => !ours.has(call.name))
    .map((call) => ({
      id: call.id,
      type: 'function' as const,
      function: { name: call.name, arguments: JSON.stringify(call.args) },
    }));
  return { content: joinAnswerParts(parts.map((message) => message.content)), toolCalls };
}

export async function usageOf(facade: FacadeHttpDeps, turnId: string): Promise<OpenAIUsage> {
  return openAIUsage(await facade.conversations.usageOfTurn(turnId));
}

const completionId = (turn: Turn) => `chatcmpl-${turn.id}`;

/** Stops a running turn's answer, in whichever process runs it (the text so far is kept, marked stopped). */
export async function stopRunningTurn(deps: HttpDeps, turn: Turn): Promise<void> {
  if (deps.cancelTurn) await deps.cancelTurn(turn.threadId, turn.id);
  else deps.runner.cancel(turn.threadId, turn.id);
}

/**
 * The client went away before the answer ended. A turn still queued is cancelled: when its turn comes its message
 * takes its seq and the turn ends at once, without calling the model. A running one is stopped with `stopRunning` (a
 * stream's client), in whichever process runs it: never another turn of the thread (the next one may have started by
 * the time the client's close is seen).
 */
export async function clientGone(
  deps: HttpDeps,
  facade: FacadeHttpDeps,
  turn: Turn,
  options: { stopRunning: boolean },
): Promise<void> {
  try {
    if (await facade.conversations.cancelQueuedTurn(turn.id)) return;
    if (!options.stopRunning) return;
    await stopRunningTurn(deps, turn);
  } catch (error) {
    deps.log.warn(
      { err: error, threadId: turn.threadId, turnId: turn.id },
      'could not stop the answer of a client that went away',
    );
  }
}

/** Calls clientGone when the response closes before it finished (the client went away). */
export function whenClientGoes(
  context: { deps: HttpDeps; facade: FacadeHttpDeps; turn: Turn; response: Response },
  options: { stopRunning: boolean },
): void {
  const { deps, facade, turn, response } = context;
  response.on('close', () => {
    if (!response.writableFinished) void clientGone(deps, facade, turn, options);
  });
}

/** A non-streamed answer: one `chat.completion` object once the turn has ended (errors through the /v1 handler). */
export async function answerAsJson(
  deps: HttpDeps,
  facade: FacadeHttpDeps,
  target: CompletionTarget,
  _request: Request,
  response: Response,
): Promise<void> {
  // A client that goes away while its turn is queued cancels it; a running answer goes on (it is stored).
  whenClientGoes({ deps, facade, turn: target.turn, response }, { stopRunning: false });
  await runAndWait(deps, target.turn, response);
  const { content, toolCalls } = await outcomeOf(deps, facade, target.turn.id);
  const message = {
    role: 'assistant',
    content,
    refusal: null,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
  response.json({
    id: completionId(target.turn),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: target.model,
    choices: [{ index: 0, message, finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop', logprobs: null }],
    usage: await usageOf(facade, target.turn.id),
  });
}

/**
 * The text of a turn's answer as the client receives it, from the thread's events: the texts of the answer's rounds
 * and its saved-memory notes, separated as the stored answer joins them (client-view.ts). `onText` gets each piece.
 */
export function answerTextListener(turnId: string, onText: (text: string) => void): (event: ThreadEvent) => void {
  const answerMessages = new Set<string>();
  let wrote = false;
  let separatorDue = false;
  return (event) => {
    if (event.type === 'message-start' && event.message.role === 'assistant' && event.message.turnId === turnId) {
      answerMessages.add(event.message.id);
      separatorDue = wrote;
    } else if (event.type === 'message-delta' && answerMessages.has(event.messageId) && event.delta !== '') {
      onText((separatorDue ? ANSWER_PART_SEPARATOR : '') + event.delta);
      separatorDue = false;
      wrote = true;
    } else if (event.type === 'message-end' && event.message.turnId === turnId && isAnswerNote(event.message)) {
      // A saved memory's note: a line of the answer, as the stored answer joins it (client-view.ts).
      onText((wrote ? ANSWER_PART_SEPARATOR : '') + event.message.content);
      separatorDue = false;
      wrote = true;
    }
  };
}

/**
 * A streamed answer: `chat.completion.chunk` events as the model writes (the texts of an answer's rounds and its
 * saved-memory notes separated as the stored answer joins them), a last chunk with `finish_reason`, a usage chunk when asked, then `data: [DONE]`.
 * A failure once the stream is open is its last event, `data: {"error": ...}`, as OpenAI sends it.
 */
export async function answerAsStream(
  deps: HttpDeps,
  facade: FacadeHttpDeps,
  target: CompletionTarget,
  options: { includeUsage: boolean },
  _request: Request,
  response: Response,
): Promise<void> {
  const { write, chunk, usage } = openCompletionStream(response, {
    id: completionId(target.turn),
    model: target.model,
  });
  const onEvent = answerTextListener(target.turn.id, (text) => write(chunk({ content: text })));
  // A client that goes away mid-answer stops it (as OpenAI's streams do): the text so far is kept, marked stopped.
  // One that goes away while its turn is queued cancels it.
  whenClientGoes({ deps, facade, turn: target.turn, response }, { stopRunning: true });
  try {
    await runAndWait(deps, target.turn, response, onEvent);
    const { toolCalls } = await outcomeOf(deps, facade, target.turn.id);
    if (toolCalls.length > 0) write(chunk({ tool_calls: toolCalls.map((call, index) => ({ index, ...call })) }));
    write(chunk({}, toolCalls.length > 0 ? 'tool_calls' : 'stop'));
    if (options.includeUsage) write(usage(await usageOf(facade, target.turn.id)));
    response.write('data: [DONE]\n\n');
  } catch (error) {
    const failure = toAppError(error);
    if (failure.code === 'INTERNAL')
      deps.log.error(
        { err: error, threadId: target.threadId, turnId: target.turn.id },
        'streamed OpenAI-compatible answer failed',
      );
    write(toOpenAIError(failure).body);
  }
  response.end();
}
