import type { Response } from 'express';
import type { Turn } from '../../core/domain/types';
import { AppError } from '../../core/errors/app-error';
import { isAnswerNote, joinAnswerParts } from '../../core/facade/client-view';
import type { HttpDeps } from '../http-deps';
import { answerTextListener, outcomeOf, usageOf, type OpenAIToolCall } from '../openai-facade/completion-response';
import type { FacadeHttpDeps } from '../openai-facade/facade-deps';
import { openEventStream } from '../openai-facade/completion-stream';
import { toOpenAIError } from '../openai-facade/openai-errors';
import { toAppError } from '../../errors/to-app-error';
import { turnEnded } from '../turn-ended';
import {
  messageItem,
  outputItemsOf,
  responseObject,
  responseUsageOf,
  type ResponseFrame,
  type ResponseUsage,
} from './response-object';
import {
  sendFunctionCalls,
  sendMessageClose,
  sendMessageOpen,
  sendResponseStart,
  sendTextDelta,
  type SendResponseEvent,
} from './response-events';
import type { ResponseTarget } from './response-answer';
import type { ClientToolName } from './response-tools';

/**
 * Characters (code points) of each `response.output_text.delta` of a background response's stream. Fixed, so the
 * events are a function of the answer alone: a stream resumed with `starting_after` numbers them as the first did.
 */
export const BACKGROUND_DELTA_CHARS = 64;

/** Whether a request asks for a background response (`background: true`), refusing what OpenAI refuses with it. */
export function isBackground(body: { background?: unknown; store?: boolean | null | undefined }): boolean {
  const { background } = body;
  if (background === undefined || background === null || background === false) return false;
  if (background !== true)
    throw new AppError('VALIDATION', 'background: must be a boolean', { details: { field: 'background' } });
  if (body.store === false)
    throw new AppError('VALIDATION', 'background: a background response must be stored (store: false refused)', {
      details: { field: 'background' },
    });
  return true;
}

/** Refuses a background response while the user has BACKGROUND_RESPONSES_PER_USER answers in flight (429). */
export async function assertBackgroundRoom(userId: string, facade: FacadeHttpDeps): Promise<void> {
  const active = await facade.conversations.activeTurns(userId);
  if (active >= facade.maxBackgroundResponses)
    throw new AppError(
      'BUSY',
      `${active} of your answers are still being written (at most ${facade.maxBackgroundResponses} for a background response); wait for one to end.`,
    );
}

/** Runs the turn detached from the request: this process' runner, or the sweeper of any process if this one dies. */
function runDetached(deps: HttpDeps, turn: Turn): void {
  deps.runner
    .kick(turn.threadId)
    .catch((error: unknown) =>
      deps.log.warn({ err: error, threadId: turn.threadId, turnId: turn.id }, 'a background answer did not start'),
    );
}

/** How a response ended, as its last events say it. */
type Ending =
  | { status: 'completed'; content: string; toolCalls: OpenAIToolCall[] }
  | { status: 'cancelled'; content: string }
  | { status: 'failed'; code: string; message: string };

/**
 * Writes a response's events in the Responses API's sequence, numbering them from 0 and sending those after
 * `startingAfter`; the text goes in deltas of BACKGROUND_DELTA_CHARS, whether it comes live in pieces or whole.
 */
class ResponseEventWriter {
  private sequence = 0;
  private opened = false;
  private pending: string[] = [];
  private text = '';

  constructor(
    private readonly target: { frame: ResponseFrame; turnId: string; names: ReadonlyMap<string, ClientToolName> },
    private readonly write: (event: Record<string, unknown>) => void,
    private readonly startingAfter: number,
  ) {}

  private readonly send: SendResponseEvent = (type, data) => {
    const event = { type, sequence_number: this.sequence, ...data };
    this.sequence += 1;
    if (event.sequence_number > this.startingAfter) this.write(event);
  };

  start(): void {
    sendResponseStart(this.send, this.target.frame);
  }

  private open(): void {
    if (this.opened) return;
    this.opened = true;
    sendMessageOpen(this.send, this.target.turnId);
  }

  private delta(delta: string): void {
    sendTextDelta(this.send, this.target.turnId, delta);
  }

  /** A piece of the answer's text: whole deltas are sent, the rest waits for more. */
  piece(text: string): void {
    this.open();
    this.text += text;
    this.pending.push(...Array.from(text));
    while (this.pending.length >= BACKGROUND_DELTA_CHARS)
      this.delta(this.pending.splice(0, BACKGROUND_DELTA_CHARS).join(''));
  }

  private closeMessage(final: string, status: 'completed' | 'in_progress'): void {
    this.open();
    if (this.pending.length > 0) this.delta(this.pending.splice(0).join(''));
    const item = { ...messageItem(this.target.turnId, final, 'completed'), status };
    sendMessageClose(this.send, this.target.turnId, final, item);
  }

  end(ending: Ending, usage: ResponseUsage | null): void {
    const { frame, turnId, names } = this.target;
    if (ending.status === 'failed') {
      this.send('error', { code: ending.code, message: ending.message, param: null });
      this.send('response.failed', {
        response: responseObject(frame, {
          status: 'failed',
          output: [],
          usage: null,
          error: { code: ending.code, message: ending.message },
        }),
      });
      return;
    }
    // The stored answer is what the client keeps: the text as streamed, or as stored when they differ.
    const final = ending.content || this.text;
    if (ending.status === 'cancelled') {
      if (final !== '') this.closeMessage(final, 'in_progress');
      const output = final !== '' ? [{ ...messageItem(turnId, final, 'completed'), status: 'incomplete' }] : [];
      this.send('response.incomplete', { response: responseObject(frame, { status: 'cancelled', output, usage }) });
      return;
    }
    const items = outputItemsOf(turnId, { content: final, toolCalls: ending.toolCalls }, names);
    const withMessage = items[0]?.type === 'message';
    if (withMessage) this.closeMessage(final, 'completed');
    sendFunctionCalls(this.send, { calls: ending.toolCalls, names, items, firstIndex: withMessage ? 1 : 0 });
    this.send('response.completed', { response: responseObject(frame, { status: 'completed', output: items, usage }) });
  }
}

/** How an ended turn's response ended: its answer, the text it kept when it was stopped, or its error. */
async function endingOf(deps: HttpDeps, facade: FacadeHttpDeps, turn: Turn): Promise<Ending> {
  const current = (await deps.turns.findTurn(turn.id)) ?? turn;
  if (current.status === 'cancelled') {
    const messages = await deps.transcript.listTurnMessages(turn.id);
    const parts = messages.filter(
      (message) =>
        !message.superseded &&
        ((message.role === 'assistant' && message.status !== 'streaming') || isAnswerNote(message)),
    );
    return { status: 'cancelled', content: joinAnswerParts(parts.map((message) => message.content)) };
  }
  try {
    return { status: 'completed', ...(await outcomeOf(deps, facade, turn.id)) };
  } catch (error) {
    const failure = toAppError(error);
    if (failure.code === 'INTERNAL')
      deps.log.error({ err: error, threadId: turn.threadId, turnId: turn.id }, 'background Responses answer failed');
    const { error: body } = toOpenAIError(failure).body;
    return { status: 'failed', code: body.code ?? body.type, message: body.message };
  }
}

/** Opens a `text/event-stream` whose events are written as `event:` + `data:` frames. */
function openEventWriter(response: Response): (event: Record<string, unknown>) => void {
  openEventStream(response);
  return (event) => response.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
}

/** Waits for the turn's end (any process runs it); a client that goes away stops the waiting, not the turn. */
async function waitForEnd(deps: HttpDeps, turn: Turn, response: Response, onEvent?: Parameters<typeof turnEnded>[2]) {
  const waiter = turnEnded(deps, turn, onEvent);
  response.on('close', () => waiter.stop());
  try {
    await waiter.done;
  } finally {
    waiter.stop();
  }
}

/**
 * A `background: true` request's answer: the turn runs detached from the request (a client that goes away stops
 * nothing; `POST /v1/responses/{id}/cancel` does). Not streamed: the Response object at once, `queued`. Streamed: its
 * events as the answer is written, in deltas of BACKGROUND_DELTA_CHARS, numbered as a resumed stream numbers them.
 */
export async function answerInBackground(
  deps: HttpDeps,
  facade: FacadeHttpDeps,
  target: ResponseTarget,
  response: Response,
  options: { stream: boolean },
): Promise<void> {
  const { turn, frame } = target;
  if (!options.stream) {
    runDetached(deps, turn);
    response.json({ ...responseObject(frame, { status: 'queued', output: [], usage: null }), background: true });
    return;
  }
  const write = openEventWriter(response);
  const writer = new ResponseEventWriter({ frame, turnId: turn.id, names: target.names }, write, -1);
  writer.start();
  const onEvent = answerTextListener(turn.id, (text) => writer.piece(text));
  runDetached(deps, turn);
  await streamToEnd({ deps, facade, turn, response, onEvent, finish: (ending, usage) => writer.end(ending, usage) });
}

/** Waits for the turn's end, then ends the stream with `finish` (a timed-out wait: a failure; the answer goes on). */
async function streamToEnd(input: {
  deps: HttpDeps;
  facade: FacadeHttpDeps;
  turn: Turn;
  response: Response;
  onEvent?: Parameters<typeof turnEnded>[2];
  finish: (ending: Ending, usage: ResponseUsage | null) => void;
}): Promise<void> {
  const { deps, facade, turn, response, finish } = input;
  let ending: Ending;
  try {
    await waitForEnd(deps, turn, response, input.onEvent);
    if (response.destroyed) return;
    ending = await endingOf(deps, facade, turn);
  } catch (error) {
    const { error: body } = toOpenAIError(toAppError(error)).body;
    ending = { status: 'failed', code: body.code ?? body.type, message: body.message };
  }
  const usage = ending.status === 'failed' ? null : responseUsageOf(await usageOf(facade, turn.id));
  finish(ending, usage);
  response.end();
}

/**
 * GET /v1/responses/{id}?stream=true&starting_after=N: the response's events after sequence number N, from any process.
 * The events are a function of the stored answer (its text in deltas of BACKGROUND_DELTA_CHARS), so they are numbered
 * as the background stream that first sent them; an answer still being written is sent once it has ended.
 */
export async function resumeResponseStream(
  deps: HttpDeps,
  facade: FacadeHttpDeps,
  input: { turn: Turn; frame: ResponseFrame; startingAfter: number },
  response: Response,
): Promise<void> {
  const { turn, frame } = input;
  const write = openEventWriter(response);
  const writer = new ResponseEventWriter({ frame, turnId: turn.id, names: new Map() }, write, input.startingAfter);
  writer.start();
  // The whole text at the end: a resumed stream cannot know the pieces written before it began.
  const finish = (ending: Ending, usage: ResponseUsage | null) => {
    if (ending.status !== 'failed' && ending.content !== '') writer.piece(ending.content);
    writer.end(ending, usage);
  };
  await streamToEnd({ deps, facade, turn, response, finish });
}

/**
 * POST /v1/responses/{id}/cancel: stops the answer as the web app's stop does (queued, it ends without calling the
 * model; running, in whichever process runs it, keeping the text so far), waits a little for its end, and returns.
 */
export async function cancelResponse(deps: HttpDeps, facade: FacadeHttpDeps, turn: Turn): Promise<void> {
  const current = (await deps.turns.findTurn(turn.id)) ?? turn;
  if (current.status !== 'queued' && current.status !== 'running') return;
  const waiter = turnEnded(deps, turn);
  try {
    if (await facade.conversations.cancelQueuedTurn(turn.id)) runDetached(deps, turn);
    else if (deps.cancelTurn) await deps.cancelTurn(turn.threadId, turn.id);
    else deps.runner.cancel(turn.threadId, turn.id);
    await Promise.race([waiter.done, new Promise((resolve) => setTimeout(resolve, CANCEL_WAIT_MS))]);
  } finally {
    waiter.stop();
  }
}

/** How long a cancel waits for the answer to end before it answers (the stop goes on). */
const CANCEL_WAIT_MS = 5_000;
