import type { OpenAIToolCall } from '../openai-facade/completion-response';
import { functionCallItem, messageItem, outputTextPart, responseObject, type ResponseFrame } from './response-object';
import type { ClientToolName } from './response-tools';

/** Sends one Responses event of `type` (the sender numbers it). */
export type SendResponseEvent = (type: string, data: Record<string, unknown>) => void;

/** The events every response stream opens with: `response.created`, `response.in_progress`. */
export function sendResponseStart(send: SendResponseEvent, frame: ResponseFrame): void {
  const snapshot = responseObject(frame, { status: 'in_progress', output: [], usage: null });
  send('response.created', { response: snapshot });
  send('response.in_progress', { response: snapshot });
}

/** Opens the answer's message item (output index 0): `response.output_item.added`, `response.content_part.added`. */
export function sendMessageOpen(send: SendResponseEvent, turnId: string): void {
  const item = messageItem(turnId, '', 'in_progress');
  send('response.output_item.added', { output_index: 0, item });
  send('response.content_part.added', {
    item_id: item.id,
    output_index: 0,
    content_index: 0,
    part: outputTextPart(''),
  });
}

/** A piece of the answer's text: `response.output_text.delta`. */
export function sendTextDelta(send: SendResponseEvent, turnId: string, delta: string): void {
  const itemId = messageItem(turnId, '', 'in_progress').id;
  send('response.output_text.delta', { item_id: itemId, output_index: 0, content_index: 0, delta, logprobs: [] });
}

/** Closes the message item's text with `final`: `response.output_text.done`, `response.content_part.done`, then `response.output_item.done` with `item`. */
export function sendMessageClose(send: SendResponseEvent, turnId: string, final: string, item: unknown): void {
  const common = { item_id: messageItem(turnId, '', 'in_progress').id, output_index: 0, content_index: 0 };
  send('response.output_text.done', { ...common, text: final, logprobs: [] });
  send('response.content_part.done', { ...common, part: outputTextPart(final) });
  send('response.output_item.done', { output_index: 0, item });
}

/**
 * Each client tool call as a `function_call` item (its arguments in one delta), from output index `firstIndex` on;
 * `items` are the response's output items, whose `output_item.done` each call's ends with.
 */
export function sendFunctionCalls(
  send: SendResponseEvent,
  input: {
    calls: readonly OpenAIToolCall[];
    names: ReadonlyMap<string, ClientToolName>;
    items: readonly unknown[];
    firstIndex: number;
  },
): void {
  input.calls.forEach((call, index) => {
    const outputIndex = index + input.firstIndex;
    const added = functionCallItem(call, input.names, 'in_progress');
    send('response.output_item.added', { output_index: outputIndex, item: added });
    const common = { item_id: added.id, output_index: outputIndex };
    send('response.function_call_arguments.delta', { ...common, delta: call.function.arguments });
    send('response.function_call_arguments.done', { ...common, name: added.name, arguments: call.function.arguments });
    send('response.output_item.done', { output_index: outputIndex, item: input.items[outputIndex] });
  });
}
