import type { Response } from 'express';
import type { Turn } from '../../core/domain';
import { toAppError } from '../../errors/to-app-error';
import type { HttpDeps } from '../http-deps';
import {
  answerTextListener,
  outcomeOf,
  runAndWait,
  stopRunningTurn,
  whenClientGoes,
  type OpenAIToolCall,
} from '../openai-facade/completion-response';
import { openEventStream } from '../openai-facade/completion-stream';
import type { FacadeHttpDeps } from '../openai-facade/facade-deps';
import type { ClientToolName } from '../openai-responses/response-tools';
import { requestIdOf, toAnthropicError } from './anthropic-errors';
import {
  anthropicUsage,
  contentOf,
  messageObject,
  TextCap,
  toolUseBlock,
  type AnthropicUsage,
  type StopReason,
} from './message-object';

/** Between two `ping` events of a stream while the answer is queued or a tool runs. */
const PING_INTERVAL_MS = 10_000;

/** The turn a request queued, and how its message is framed. */
export interface MessageTarget {
  turn: Turn;
  model: string;
  /** The request's `max_tokens`: the answer the client receives is cut there (`stop_reason: "max_tokens"`). */
  maxTokens: number;
  /** Upstream tool names → the client's. */
  names: ReadonlyMap<string, ClientToolName>;
}

interface Outcome {
  text: string;
  toolCalls: OpenAIToolCall[];
  stopReason: StopReason;
  usage: AnthropicUsage;
}

const messageId = (turn: Turn) => `msg_${turn.id.replace(/-/g, '')}`;

/**
 * Runs the turn, handing each piece of its text that passes `max_tokens` to `onText`. The cap reached, the answer is
 * stopped (kept in the thread, marked stopped: the client's copy of it still matches its next history) and the
 * outcome is the text the client received.
 */
async function runCapped(
  context: { deps: HttpDeps; facade: FacadeHttpDeps; target: MessageTarget; response: Response },
  onText: (text: string) => void,
): Promise<Outcome> {
  const { deps, facade, target, response } = context;
  const cap = new TextCap(target.maxTokens, deps.settings.counter);
  let received = '';
  const onEvent = answerTextListener(target.turn.id, (text) => {
    if (cap.reached) return;
    const passed = cap.take(text);
    received += passed;
    if (passed !== '') onText(passed);
    if (cap.reached) void stopRunningTurn(deps, target.turn);
  });
  await runAndWait(deps, target.turn, response, onEvent);
  const usage = anthropicUsage(await facade.conversations.usageOfTurn(target.turn.id));
  if (cap.reached) return { text: received, toolCalls: [], stopReason: 'max_tokens', usage };
  const { content, toolCalls } = await outcomeOf(deps, facade, target.turn.id);
  return { text: content, toolCalls, stopReason: toolCalls.length > 0 ? 'tool_use' : 'end_turn', usage };
}

/** A non-streamed answer: the message object once the turn has ended (errors through the route's handler). */
export async function answerMessageAsJson(
  deps: HttpDeps,
  facade: FacadeHttpDeps,
  target: MessageTarget,
  response: Response,
): Promise<void> {
  // A client that goes away while its turn is queued cancels it; a running answer goes on (it is stored).
  whenClientGoes({ deps, facade, turn: target.turn, response }, { stopRunning: false });
  const outcome = await runCapped({ deps, facade, target, response }, () => undefined);
  response.json(
    messageObject({
      id: messageId(target.turn),
      model: target.model,
      content: contentOf(outcome.text, outcome.toolCalls, target.names),
      stopReason: outcome.stopReason,
      usage: outcome.usage,
    }),
  );
}

/** An open `text/event-stream` of Messages events (`event: <type>` and `data: <json>`). */
function openMessageStream(response: Response): (type: string, data?: Record<string, unknown>) => void {
  openEventStream(response);
  return (type, data = {}) => {
    response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  };
}

/**
 * A streamed answer, in the Messages API's event sequence: `message_start`, `ping`, the text block
 * (`content_block_start`, `text_delta`s as the model writes, `content_block_stop`), each client tool call as a
 * `tool_use` block (its input in one `input_json_delta`), `message_delta` with `stop_reason` and the usage, then
 * `message_stop`; a `ping` every 10 s meanwhile. A failure once the stream is open is an `error` event.
 */
export async function answerMessageAsStream(
  deps: HttpDeps,
  facade: FacadeHttpDeps,
  target: MessageTarget,
  response: Response,
): Promise<void> {
  const send = openMessageStream(response);
  const { turn } = target;
  const empty = anthropicUsage({ promptTokens: 0, completionTokens: 0, cachedTokens: null });
  send('message_start', {
    message: messageObject({ id: messageId(turn), model: target.model, content: [], stopReason: null, usage: empty }),
  });
  send('ping');
  const pings = setInterval(() => send('ping'), PING_INTERVAL_MS);
  pings.unref();
  let blocks = 0;
  let textOpen = false;
  const openText = () => {
    if (textOpen) return;
    textOpen = true;
    blocks = 1;
    send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
  };
  // A client that goes away mid-answer stops it (the text so far is kept, marked stopped); queued, it is cancelled.
  whenClientGoes({ deps, facade, turn, response }, { stopRunning: true });
  try {
    const outcome = await runCapped({ deps, facade, target, response }, (text) => {
      openText();
      send('content_block_delta', { index: 0, delta: { type: 'text_delta', text } });
    });
    if (outcome.toolCalls.length === 0) openText();
    if (textOpen) send('content_block_stop', { index: 0 });
    for (const call of outcome.toolCalls) {
      const index = blocks;
      blocks += 1;
      const block = toolUseBlock(call, target.names);
      send('content_block_start', { index, content_block: { ...block, input: {} } });
      send('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
      send('content_block_stop', { index });
    }
    send('message_delta', { delta: { stop_reason: outcome.stopReason, stop_sequence: null }, usage: outcome.usage });
    send('message_stop');
  } catch (error) {
    const failure = toAppError(error);
    if (failure.code === 'INTERNAL')
      deps.log.error({ err: error, threadId: turn.threadId, turnId: turn.id }, 'streamed Anthropic answer failed');
    const { body } = toAnthropicError(failure, requestIdOf(response));
    send('error', { error: body.error, request_id: body.request_id });
  } finally {
    clearInterval(pings);
  }
  response.end();
}
