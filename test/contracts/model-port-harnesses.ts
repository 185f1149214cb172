/**
 * The chat-model contracts' harnesses: a script of provider replies served by the scripted fake, or by the OpenAI or
 * Anthropic stub behind the real adapters (built by the production factory, createChatModels, and the ports of
 * model-ports.ts), with what each provider received read back into one view (model-port-fixtures.ts).
 */
import type { ChatModelPort, SummarizerPort } from '../../src/core/ports';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import { createChatModels } from '../../src/llm/create-chat-model';
import { createChatPort, createSummarizerPort } from '../../src/llm/model-ports';
import {
  createScriptedChatModel,
  scriptedFailure,
  scriptedText,
  scriptedToolCalls,
  type ScriptedCall,
  type ScriptedReply,
} from '../fakes';
import {
  anthropicError,
  anthropicSequence,
  anthropicText,
  anthropicToolUse,
  type AnthropicReply,
  type AnthropicStub,
  type MessagesRequestBody,
} from '../support/anthropic-messages-stub';
import {
  replySequence,
  replyWithError,
  replyWithText,
  replyWithToolCalls,
  type OpenAIStub,
  type StubReply,
  type StubRequestBody,
} from '../support/openai-stub';
import {
  argumentsText,
  packView,
  type MakeScriptedPort,
  type ProviderReply,
  type ProviderRequestView,
  type ProviderUsage,
} from './model-port-fixtures';

type Role = 'chat' | 'summarizer';
type PortOf<R extends Role> = R extends 'chat' ? ChatModelPort : SummarizerPort;

// --- the scripted fake -------------------------------------------------------------------------------------------

/** A call whose arguments are not a JSON object, as the adapters report it. */
function invalidCall(call: { id: string; name: string; arguments: string }) {
  return {
    id: call.id,
    name: call.name,
    rawArguments: call.arguments,
    error: 'Tool call arguments are not valid JSON',
  };
}

function isJsonObject(raw: string): boolean {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** A provider reply as the fake plays it (an HTTP error as the adapters classify it). */
function toScriptedReply(reply: ProviderReply): ScriptedReply {
  if (reply.type === 'error')
    return scriptedFailure(reply.status === 429 ? 'rate_limited' : 'server', true, {
      ...(reply.retryAfterSeconds !== undefined ? { retryAfterMs: reply.retryAfterSeconds * 1000 } : {}),
    });
  if (reply.type === 'text')
    return scriptedText(reply.chunks, {
      ...(reply.usage ? { usage: reply.usage } : {}),
      ...(reply.chunkDelayMs ? { chunkDelayMs: reply.chunkDelayMs } : {}),
    });
  const parsed = reply.calls.map((call) => ({
    ...call,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
  }));
  return scriptedToolCalls(
    parsed
      .filter((call) => isJsonObject(call.arguments))
      .map((call) => ({ id: call.id, name: call.name, args: JSON.parse(call.arguments) as Record<string, unknown> })),
    {
      invalidToolCalls: parsed.filter((call) => !isJsonObject(call.arguments)).map(invalidCall),
      ...(reply.usage ? { usage: reply.usage } : {}),
    },
  );
}

function fakeView(call: ScriptedCall): ProviderRequestView {
  return {
    messages: packView(call.messages),
    tools: (call.tools ?? []).map((tool) => tool.function.name),
    toolChoice: call.toolChoice,
  };
}

/** The scripted fake (test/fakes/scripted-chat-model.ts) serving the script; it is both ports. */
export const scriptedFakeHarness: MakeScriptedPort<ChatModelPort & SummarizerPort> = async (script) => {
  const model = createScriptedChatModel({ replies: script.map(toScriptedReply) });
  return { port: model, received: () => model.calls.map(fakeView) };
};

// --- the OpenAI-compatible adapter over the OpenAI stub ----------------------------------------------------------

function toOpenAIReply(reply: ProviderReply): StubReply {
  if (reply.type === 'error')
    return replyWithError(reply.status, {
      ...(reply.retryAfterSeconds !== undefined ? { retryAfterSeconds: reply.retryAfterSeconds } : {}),
    });
  const usage = reply.usage ? { usage: reply.usage } : {};
  if (reply.type === 'text')
    return replyWithText(reply.chunks.join(''), {
      chunks: reply.chunks,
      ...usage,
      ...(reply.chunkDelayMs ? { chunkDelayMs: reply.chunkDelayMs } : {}),
    });
  return replyWithToolCalls(reply.calls, usage);
}

function openAIView(body: StubRequestBody): ProviderRequestView {
  const choice = body.tool_choice;
  return {
    messages: body.messages.flatMap((message) => {
      const text = wireContentText(message.content);
      if (message.role === 'tool') return [`tool#${message.tool_call_id ?? ''}: ${text}`];
      const calls = (message.tool_calls ?? []).map(
        (call) =>
          `assistant calls ${call.function?.name ?? ''}#${call.id ?? ''} ${argumentsText(call.function?.arguments ?? '')}`,
      );
      return [...(text !== '' || message.role !== 'assistant' ? [`${message.role}: ${text}`] : []), ...calls];
    }),
    tools: (body.tools ?? []).map((tool) => tool.function.name),
    toolChoice: choice === 'auto' || choice === 'none' ? choice : undefined,
  };
}

/**
 * ChatOpenAI through model-ports.ts against the OpenAI stub (`stub()`: started by the suite's beforeAll). Each call
 * resets the stub and scripts it.
 */
export function openAIHarness<R extends Role>(stub: () => OpenAIStub, role: R): MakeScriptedPort<PortOf<R>> {
  return async (script) => {
    const server = stub();
    server.reset();
    server.setResponder(replySequence(script.map(toOpenAIReply)));
    const models = createChatModels({ apiKey: 'test-key', baseUrl: server.url });
    const port =
      role === 'chat'
        ? createChatPort(models.chat, models.label.model)
        : createSummarizerPort(models.summarizer, models.label.summaryModel);
    return { port: port as PortOf<R>, received: () => server.requests.map((request) => openAIView(request.body)) };
  };
}

// --- the Anthropic adapter over the Messages API stub ------------------------------------------------------------

/** Anthropic's `input_tokens` leaves out the tokens read from the cache. */
function anthropicUsage(usage: ProviderUsage) {
  return {
    input_tokens: usage.promptTokens - usage.cachedTokens,
    output_tokens: usage.completionTokens,
    cache_read_input_tokens: usage.cachedTokens,
    cache_creation_input_tokens: 0,
  };
}

function toAnthropicReply(reply: ProviderReply): AnthropicReply {
  if (reply.type === 'error')
    return anthropicError(reply.status, reply.status === 429 ? 'rate_limit_error' : 'api_error', {
      ...(reply.retryAfterSeconds !== undefined ? { retryAfterSeconds: reply.retryAfterSeconds } : {}),
    });
  const usage = reply.usage ? { usage: anthropicUsage(reply.usage) } : {};
  if (reply.type === 'text')
    return anthropicText(reply.chunks.join(''), {
      chunks: reply.chunks,
      ...usage,
      ...(reply.chunkDelayMs ? { chunkDelayMs: reply.chunkDelayMs } : {}),
    });
  return anthropicToolUse(
    reply.calls.map((call) => ({ id: call.id, name: call.name, input: call.arguments })),
    usage,
  );
}

function anthropicBlockView(role: string, block: Record<string, unknown>): string[] {
  if (block.type === 'text') return [`${role}: ${String(block.text)}`];
  if (block.type === 'tool_use')
    return [`assistant calls ${String(block.name)}#${String(block.id)} ${JSON.stringify(block.input)}`];
  if (block.type === 'tool_result') {
    const content = block.content;
    const text = typeof content === 'string' ? content : wireContentText(content as { type: string; text?: string }[]);
    return [`tool#${String(block.tool_use_id)}: ${text}`];
  }
  return [];
}

function anthropicView(body: MessagesRequestBody): ProviderRequestView {
  const system = typeof body.system === 'string' ? [{ text: body.system }] : (body.system ?? []);
  const choice = (body.tool_choice as { type?: string } | undefined)?.type;
  return {
    messages: [
      ...system.map((block) => `system: ${block.text}`),
      ...body.messages.flatMap((message) =>
        typeof message.content === 'string'
          ? [`${message.role}: ${message.content}`]
          : message.content.flatMap((block) => anthropicBlockView(message.role, block)),
      ),
    ],
    tools: (body.tools ?? []).map((tool) => String(tool.name)),
    toolChoice: choice === 'auto' || choice === 'none' ? choice : undefined,
  };
}

/** The Anthropic Messages adapter through model-ports.ts against the Messages API stub. */
export function anthropicHarness<R extends Role>(stub: () => AnthropicStub, role: R): MakeScriptedPort<PortOf<R>> {
  return async (script) => {
    const server = stub();
    server.reset();
    server.setResponder(anthropicSequence(script.map(toAnthropicReply)));
    const models = createChatModels({
      provider: 'anthropic',
      anthropic: { apiKey: 'test-key', baseUrl: server.url, cacheTtl: '5m' },
    });
    const port =
      role === 'chat'
        ? createChatPort(models.chat, models.label.model)
        : createSummarizerPort(models.summarizer, models.label.summaryModel);
    return { port: port as PortOf<R>, received: () => server.requests.map((request) => anthropicView(request.body)) };
  };
}
