/**
 * What the chat-model and summarizer contracts script and observe, in words every adapter can say: a provider's reply
 * (text in chunks, tool calls, usage, an HTTP error) and a provider's request (its messages, tools and tool choice).
 * The harnesses (model-port-harnesses.ts) serve a script through the scripted fake or through the OpenAI and Anthropic
 * stubs, and read what each received back into this view.
 */
import type { OpenAIFunctionTool, PackMessage } from '../../src/core/context/types';

/** Usage as the provider reports it, in the core's terms (the Anthropic harness splits it into Anthropic's fields). */
export interface ProviderUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

/** One scripted answer of the "provider". */
export type ProviderReply =
  | { type: 'text'; chunks: string[]; usage?: ProviderUsage; chunkDelayMs?: number }
  | {
      type: 'tool-calls';
      /** A string is sent as the raw arguments (e.g. text that is not JSON). */
      calls: { id: string; name: string; arguments: Record<string, unknown> | string }[];
      usage?: ProviderUsage;
    }
  | { type: 'error'; status: 429 | 500; retryAfterSeconds?: number };

/** One request the provider received. */
export interface ProviderRequestView {
  /**
   * Each message part in order: `system: …`, `user: …`, `assistant: …`, `assistant calls <name>#<id> <json>`,
   * `tool#<id>: …` (an assistant message with text and calls is its text, then each call).
   */
  messages: string[];
  /** Names of the tools offered. */
  tools: string[];
  toolChoice: 'auto' | 'none' | undefined;
}

/** A port serving a script, and what its provider received. */
export interface ModelPortHarness<Port> {
  port: Port;
  received(): ProviderRequestView[];
}

/** Builds a port whose provider answers `script`, one reply per call. */
export type MakeScriptedPort<Port> = (script: ProviderReply[]) => Promise<ModelPortHarness<Port>>;

export const contractTools: OpenAIFunctionTool[] = [
  {
    type: 'function',
    function: {
      name: 'calculator',
      description: 'Evaluates arithmetic',
      parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
    },
  },
  {
    type: 'function',
    function: { name: 'current_time', description: 'The current time', parameters: { type: 'object', properties: {} } },
  },
];

const message = (role: PackMessage['role'], content: string, extra: Partial<PackMessage> = {}): PackMessage => ({
  role,
  content,
  tokens: 0,
  ...extra,
});

/** A short prompt: instructions and a question. */
export const contractPrompt: PackMessage[] = [
  message('system', 'You are a terse assistant.'),
  message('user', 'Say hello.', { seq: 1 }),
];

/** A conversation with every role: a tool call, its result, an answer and the next question. */
export const contractConversation: PackMessage[] = [
  message('system', 'You are a terse assistant.'),
  message('user', 'What is 2+2?', { seq: 1 }),
  message('assistant', '', {
    seq: 2,
    toolCalls: [{ id: 'call_sum', name: 'calculator', args: { expression: '2+2' } }],
  }),
  message('tool', '4', { seq: 3, toolCallId: 'call_sum' }),
  message('assistant', 'It is 4.', { seq: 4 }),
  message('user', 'And 3+3?', { seq: 5 }),
];

/** `contractConversation` as every provider must receive it, in order. */
export const contractConversationView = [
  'system: You are a terse assistant.',
  'user: What is 2+2?',
  'assistant calls calculator#call_sum {"expression":"2+2"}',
  'tool#call_sum: 4',
  'assistant: It is 4.',
  'user: And 3+3?',
];

/** A text reply (usage included when given). */
export function textReply(
  chunks: string[],
  extra: { usage?: ProviderUsage; chunkDelayMs?: number } = {},
): ProviderReply {
  return { type: 'text', chunks, ...extra };
}

/** The wire form of tool-call arguments, normalised (key order kept, spacing dropped) when they are JSON. */
export function argumentsText(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw));
  } catch {
    return raw;
  }
}

/** The view of pack messages (what the scripted fake was given). */
export function packView(messages: readonly PackMessage[]): string[] {
  return messages.flatMap((entry) => {
    if (entry.role === 'tool') return [`tool#${entry.toolCallId ?? ''}: ${entry.content}`];
    const text = entry.content !== '' || entry.role !== 'assistant' ? [`${entry.role}: ${entry.content}`] : [];
    const calls = (entry.toolCalls ?? []).map(
      (call) => `assistant calls ${call.name}#${call.id} ${JSON.stringify(call.args)}`,
    );
    return [...text, ...calls];
  });
}
