import type { Response } from 'express';
import type { Turn } from '../../core/domain/types';
import type { AppError } from '../../core/errors/app-error';
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

export interface Outcome {
  text: string;
  toolCalls: OpenAIToolCall[];
  stopReason: StopReason;
  usage: AnthropicUsage;
}

const messageId = (turn: Turn) => `msg_${turn.id.replace(/-/g, '')}`;

/**
 * Runs the turn, handing each piece of its text that passes `max_tokens` to `onText`. The cap reached, the answer is
 * stopped (kept in the thread, marked stopped: the client's copy of it still matches its next history) and the
 * outcome is the text the client received; an answer that finished before the stop took effect is given whole.
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
    if (cap.reached)
      stopRunningTurn(deps, target.turn).catch((error: unknown) =>
        deps.log.warn({ err: error, turnId: target.turn.id }, 'could not stop an answer at its max_tokens'),
      );
  });
  await runAndWait(deps, target.turn, response, onEvent);
  const usage = anthropicUsage(await facade.conversations.usageOfTurn(target.turn.id));
  // Stopped, the answer is what the client received; finished before the stop took effect, it is the whole answer
  // (what the client's next history must hold to match the thread).
  if (cap.reached && (await deps.turns.findTurn(target.turn.id))?.status !== 'complete')
    return { text: received, toolCalls: [], stopReason: 'max_tokens', usage };
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

/**
 * An open `text/event-stream` of Messages events: `message_start` and a `ping` at once, the text block as its pieces
 * come, then the end (the `tool_use` blocks, `message_delta`, `message_stop`) or an `error` event; a `ping` every 10 s
 * meanwhile.
 */
export class MessageEventStream {
  private blocks = 0;
  private textOpen = false;
  private readonly pings: NodeJS.Timeout;

  constructor(
    private readonly response: Response,
    frame: { id: string; model: string },
  ) {
    openEventStream(response);
    const empty = anthropicUsage({ promptTokens: 0, completionTokens: 0, cachedTokens: null });
    this.send('message_start', {
      message: messageObject({ ...frame, content: [], stopReason: null, usage: empty }),
    });
    this.send('ping');
    this.pings = setInterval(() => this.send('ping'), PING_INTERVAL_MS);
    this.pings.unref();
  }

  private send(type: string, data: Record<string, unknown> = {}): void {
    this.response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  }

  private openText(): void {
    if (this.textOpen) return;
    this.textOpen = true;
    this.blocks = 1;
    this.send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
  }

  /** A piece of the answer's text. */
  text(text: string): void {
    this.openText();
    this.send('content_block_delta', { index: 0, delta: { type: 'text_delta', text } });
  }

  /** The end: the text block closed, each client tool call as a `tool_use` block, the stop reason and the usage. */
  end(outcome: Omit<Outcome, 'text'>, names: ReadonlyMap<string, ClientToolName>): void {
    if (outcome.toolCalls.length === 0) this.openText();
    if (this.textOpen) this.send('content_block_stop', { index: 0 });
    for (const call of outcome.toolCalls) {
      const index = this.blocks;
      this.blocks += 1;
      const block = toolUseBlock(call, names);
      this.send('content_block_start', { index, content_block: { ...block, input: {} } });
      this.send('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
      this.send('content_block_stop', { index });
    }
    this.send('message_delta', {
      delta: { stop_reason: outcome.stopReason, stop_sequence: null },
      usage: outcome.usage,
    });
    this.send('message_stop');
    this.close();
  }

  /** A failure once the stream is open: an `error` event, in Anthropic's shape. */
  fail(failure: AppError): void {
    const { body } = toAnthropicError(failure, requestIdOf(this.response));
    this.send('error', { error: body.error, request_id: body.request_id });
    this.close();
  }

  private close(): void {
    clearInterval(this.pings);
    this.response.end();
  }
}

/**
 * A streamed answer, in the Messages API's event sequence (MessageEventStream): the text as the model writes it, each
 * client tool call as a `tool_use` block (its input in one `input_json_delta`). A failure once the stream is open is
 * an `error` event.
 */
export async function answerMessageAsStream(
  deps: HttpDeps,
  facade: FacadeHttpDeps,
  target: MessageTarget,
  response: Response,
): Promise<void> {
  const { turn } = target;
  const stream = new MessageEventStream(response, { id: messageId(turn), model: target.model });
  // A client that goes away mid-answer stops it (the text so far is kept, marked stopped); queued, it is cancelled.
  whenClientGoes({ deps, facade, turn, response }, { stopRunning: true });
  try {
    let sent = '';
    const outcome = await runCapped({ deps, facade, target, response }, (text) => {
      sent += text;
      stream.text(text);
    });
    // The rest of an answer the client must hold whole (it finished before the max_tokens stop took effect).
    if (outcome.text.length > sent.length && outcome.text.startsWith(sent))
      stream.text(outcome.text.slice(sent.length));
    stream.end(outcome, target.names);
  } catch (error) {
    const failure = toAppError(error);
    if (failure.code === 'INTERNAL')
      deps.log.error({ err: error, threadId: turn.threadId, turnId: turn.id }, 'streamed Anthropic answer failed');
    stream.fail(failure);
  }
}
