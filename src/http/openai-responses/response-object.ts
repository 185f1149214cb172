import type { OpenAIToolCall } from '../openai-facade/completion-response';
import type { OpenAIUsage } from '../openai-facade/completion-stream';
import { functionCallItemIdOf, messageItemIdOf } from './response-ids';
import type { ClientToolName } from './response-tools';

/** A Response's `usage`, as the Responses API reports it. */
export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** Chat Completions usage (what the upstream reported for the answer's packs) in the Responses API's shape. */
export function responseUsageOf(usage: OpenAIUsage): ResponseUsage {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.total_tokens,
  };
}

/** The answer's message item (its text as one `output_text` part). */
export function messageItem(turnId: string, text: string, status: 'in_progress' | 'completed') {
  return {
    type: 'message' as const,
    id: messageItemIdOf(turnId),
    status,
    role: 'assistant' as const,
    content: status === 'completed' ? [outputTextPart(text)] : [],
  };
}

export function outputTextPart(text: string) {
  return { type: 'output_text' as const, text, annotations: [], logprobs: [] };
}

/** A client tool call as a `function_call` item (a namespaced tool's call carries its namespace and own name). */
export function functionCallItem(
  call: OpenAIToolCall,
  names: ReadonlyMap<string, ClientToolName>,
  status: 'in_progress' | 'completed',
) {
  const known = names.get(call.function.name);
  return {
    type: 'function_call' as const,
    id: functionCallItemIdOf(call.id),
    call_id: call.id,
    name: known?.name ?? call.function.name,
    ...(known?.namespace !== undefined ? { namespace: known.namespace } : {}),
    arguments: status === 'completed' ? call.function.arguments : '',
    status,
  };
}

/** The output items of an answer: its text (left out when it only called tools), then its client tool calls. */
export function outputItemsOf(
  turnId: string,
  outcome: { content: string; toolCalls: OpenAIToolCall[] },
  names: ReadonlyMap<string, ClientToolName>,
) {
  const calls = outcome.toolCalls.map((call) => functionCallItem(call, names, 'completed'));
  if (outcome.content === '' && calls.length > 0) return calls;
  return [messageItem(turnId, outcome.content, 'completed'), ...calls];
}

/** What a Response object says besides its output: who asked what. */
export interface ResponseFrame {
  id: string;
  model: string;
  createdAt: number;
  instructions: string | null;
  previousResponseId: string | null;
  store: boolean;
  metadata: Record<string, string>;
  /** The conversation the response was stored in, when the request named one. */
  conversation: { id: string } | null;
  /** The request's tools, echoed back as OpenAI does. */
  tools: unknown[];
}

/** The states of a Response object. */
export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'cancelled';

/** A Response object (`object: "response"`) in a given state. */
export function responseObject(
  frame: ResponseFrame,
  state: {
    status: ResponseStatus;
    output: unknown[];
    usage: ResponseUsage | null;
    error?: { code: string; message: string } | null;
  },
) {
  return {
    id: frame.id,
    object: 'response' as const,
    created_at: frame.createdAt,
    status: state.status,
    error: state.error ?? null,
    incomplete_details: null,
    instructions: frame.instructions,
    max_output_tokens: null,
    model: frame.model,
    output: state.output,
    parallel_tool_calls: true,
    previous_response_id: frame.previousResponseId,
    reasoning: null,
    store: frame.store,
    temperature: null,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: frame.tools,
    top_p: null,
    truncation: 'disabled',
    usage: state.usage,
    user: null,
    metadata: frame.metadata,
    conversation: frame.conversation,
  };
}
