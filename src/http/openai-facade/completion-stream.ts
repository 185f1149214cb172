import type { Response } from 'express';

/** OpenAI's usage object, as this route answers it. */
export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** The upstream's reported cached prompt tokens, summed over the answer's calls; absent when none were reported. */
  prompt_tokens_details?: { cached_tokens: number };
}

/** Our usage figures in OpenAI's shape. */
export function openAIUsage(usage: {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number | null;
}): OpenAIUsage {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    ...(usage.cachedTokens !== null ? { prompt_tokens_details: { cached_tokens: usage.cachedTokens } } : {}),
  };
}

/** An open `text/event-stream` of `chat.completion.chunk` events (the role chunk already sent). */
export interface CompletionStream {
  /** One `data:` event. */
  write(data: unknown): void;
  /** A chunk of the one choice. */
  chunk(delta: Record<string, unknown>, finishReason?: string | null): Record<string, unknown>;
  /** The usage chunk (no choices), as OpenAI sends it with `stream_options.include_usage`. */
  usage(usage: OpenAIUsage): Record<string, unknown>;
}

/** Starts a `text/event-stream` answer: its headers, sent at once (no proxy buffering). */
export function openEventStream(response: Response): void {
  response.status(200).set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  response.flushHeaders();
}

/** Opens the event stream of a streamed answer: headers, then the first chunk naming the assistant's role. */
export function openCompletionStream(response: Response, identity: { id: string; model: string }): CompletionStream {
  const created = Math.floor(Date.now() / 1000);
  const base = { id: identity.id, object: 'chat.completion.chunk', created, model: identity.model };
  const stream: CompletionStream = {
    write: (data) => {
      response.write(`data: ${JSON.stringify(data)}\n\n`);
    },
    chunk: (delta, finishReason = null) => ({
      ...base,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    }),
    usage: (usage) => ({ ...base, choices: [], usage }),
  };
  openEventStream(response);
  stream.write(stream.chunk({ role: 'assistant', content: '' }));
  return stream;
}
