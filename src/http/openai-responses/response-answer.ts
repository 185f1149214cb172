import type { Response } from 'express';
import type { Turn } from '../../core/domain/types';
import type { HttpDeps } from '../http-deps';
import { answerTextListener, clientGone, outcomeOf, runAndWait, usageOf } from '../openai-facade/completion-response';
import { openEventStream } from '../openai-facade/completion-stream';
import type { FacadeHttpDeps } from '../openai-facade/facade-deps';
import { toOpenAIError } from '../openai-facade/openai-errors';
import { toAppError } from '../../errors/to-app-error';
import { outputItemsOf, responseObject, responseUsageOf, type ResponseFrame } from './response-object';
import {
  sendFunctionCalls,
  sendMessageClose,
  sendMessageOpen,
  sendResponseStart,
  sendTextDelta,
  type SendResponseEvent,
} from './response-events';
import type { ClientToolName } from './response-tools';

/** The turn a request queued, and how its Response object is framed. */
export interface ResponseTarget {
  turn: Turn;
  frame: ResponseFrame;
  /** Upstream tool names → the client's (namespaced tools). */
  names: ReadonlyMap<string, ClientToolName>;
  /** Output items after the answer's, read once it is stored (a managed conversation's compaction item). */
  extraItems?: () => Promise<unknown[]>;
}

/** A non-streamed answer: the completed Response object once the turn has ended (errors through the /v1 handler). */
export async function answerResponseAsJson(
  deps: HttpDeps,
  facade: FacadeHttpDeps,
  target: ResponseTarget,
  response: Response,
): Promise<void> {
  // A client that goes away while its turn is queued cancels it; a running answer goes on (it is stored).
  response.on('close', () => {
    if (!response.writableFinished) void clientGone(deps, facade, target.turn, { stopRunning: false });
  });
  await runAndWait(deps, target.turn, response);
  const outcome = await outcomeOf(deps, facade, target.turn.id);
  const usage = responseUsageOf(await usageOf(facade, target.turn.id));
  const extra = target.extraItems ? await target.extraItems() : [];
  response.json(
    responseObject(target.frame, {
      status: 'completed',
      output: [...outputItemsOf(target.turn.id, outcome, target.names), ...extra],
      usage,
    }),
  );
}

/** An open `text/event-stream` of Responses events, each with its `sequence_number`. */
export function openResponseStream(response: Response): SendResponseEvent {
  let sequence = 0;
  openEventStream(response);
  return (type, data) => {
    const event = { type, sequence_number: sequence, ...data };
    sequence += 1;
    response.write(`event: ${type}\ndata: ${JSON.stringify(event)}\n\n`);
  };
}

/**
 * A streamed answer, in the Responses API's event sequence: `response.created`, `response.in_progress`, the message
 * item (`output_item.added`, `content_part.added`, `output_text.delta`…, `output_text.done`, `content_part.done`,
 * `output_item.done`), each client tool call as a `function_call` item (its arguments in one delta), then
 * `response.completed`. A failure once the stream is open is an `error` event, then `response.failed`.
 */
export async function answerResponseAsStream(
  deps: HttpDeps,
  facade: FacadeHttpDeps,
  target: ResponseTarget,
  response: Response,
): Promise<void> {
  const send = openResponseStream(response);
  const { frame, turn } = target;
  sendResponseStart(send, frame);
  let text = '';
  let opened = false;
  const open = () => {
    if (opened) return;
    opened = true;
    sendMessageOpen(send, turn.id);
  };
  const onEvent = answerTextListener(turn.id, (delta) => {
    open();
    text += delta;
    sendTextDelta(send, turn.id, delta);
  });
  // A client that goes away mid-answer stops it (the text so far is kept, marked stopped); queued, it is cancelled.
  response.on('close', () => {
    if (!response.writableFinished) void clientGone(deps, facade, turn, { stopRunning: true });
  });
  try {
    await runAndWait(deps, turn, response, onEvent);
    const outcome = await outcomeOf(deps, facade, turn.id);
    const items = outputItemsOf(turn.id, outcome, target.names);
    const withMessage = items[0]?.type === 'message';
    if (withMessage) {
      open();
      // The stored answer is what the client keeps: the text as streamed, or as stored when they differ.
      sendMessageClose(send, turn.id, outcome.content || text, items[0]);
    }
    sendFunctionCalls(send, { calls: outcome.toolCalls, names: target.names, items, firstIndex: withMessage ? 1 : 0 });
    const extra = target.extraItems ? await target.extraItems() : [];
    extra.forEach((item, index) => {
      send('response.output_item.added', { output_index: items.length + index, item });
      send('response.output_item.done', { output_index: items.length + index, item });
    });
    const usage = responseUsageOf(await usageOf(facade, turn.id));
    const output = [...items, ...extra];
    send('response.completed', { response: responseObject(frame, { status: 'completed', output, usage }) });
  } catch (error) {
    const failure = toAppError(error);
    if (failure.code === 'INTERNAL')
      deps.log.error({ err: error, threadId: turn.threadId, turnId: turn.id }, 'streamed Responses answer failed');
    const { error: body } = toOpenAIError(failure).body;
    const code = body.code ?? body.type;
    send('error', { code, message: body.message, param: body.param });
    send('response.failed', {
      response: responseObject(frame, {
        status: 'failed',
        output: [],
        usage: null,
        error: { code, message: body.message },
      }),
    });
  }
  response.end();
}
