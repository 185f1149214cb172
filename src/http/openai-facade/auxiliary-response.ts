import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import { answerAuxiliary, type AuxiliaryAnswer, type AuxiliaryDeps } from '../../core/facade/answer-auxiliary';
import type { LogPort } from '../../core/ports';
import type { HttpDeps } from '../http-deps';
import type { FacadeHttpDeps } from './facade-deps';
import { toAppError } from '../../errors/to-app-error';
import { openAIUsage, openCompletionStream, type CompletionStream } from './completion-stream';
import { toOpenAIError } from './openai-errors';

/** What answering an auxiliary request needs of the server's deps. */
export function auxiliaryDepsOf(deps: HttpDeps, facade: FacadeHttpDeps): AuxiliaryDeps {
  return {
    chat: facade.chat,
    sendLimiter: deps.fork.sendLimiter,
    settings: deps.fork.settings,
    maxMessageChars: deps.limits.maxMessageChars,
    timeoutMs: deps.limits.turnTimeoutMs,
    calls: facade.calls,
    log: deps.log,
    ...(deps.spend ? { spend: deps.spend } : {}),
  };
}

/** Answers an auxiliary request, the model call stopped when the client goes away (nothing is kept of it). */
export function answerAuxiliaryWhileConnected(
  target: { userId: string; instructions: string | null; content: string },
  deps: AuxiliaryDeps,
  response: Response,
  onDelta: (delta: string) => void,
): Promise<AuxiliaryAnswer> {
  const gone = new AbortController();
  response.on('close', () => {
    if (!response.writableFinished) gone.abort();
  });
  const { userId, instructions, content } = target;
  return answerAuxiliary({ userId, instructions, content, signal: gone.signal, onDelta }, deps);
}

/** An auxiliary request (FACADE_AUXILIARY_PREFIXES): who asks, what, and how the client wants the answer. */
export interface AuxiliaryTarget {
  userId: string;
  model: string;
  instructions: string | null;
  content: string;
  stream: boolean;
  includeUsage: boolean;
}

/**
 * Answers a client's background request (a title, tags, suggestions) statelessly, streamed or not, in the same shapes
 * as a turn's answer but without a thread (no `X-Chat-Thread-Id`). A stream opens at the first token, so a refusal
 * (the rate limit, a prompt over the budget) or an upstream failure before it is an HTTP error like any other.
 */
export async function answerAuxiliaryRequest(
  input: { target: AuxiliaryTarget; deps: AuxiliaryDeps; log: LogPort },
  response: Response,
): Promise<void> {
  const { target, deps } = input;
  const id = `chatcmpl-aux-${randomUUID()}`;
  let stream: CompletionStream | null = null;
  const open = () => (stream ??= openCompletionStream(response, { id, model: target.model }));
  const onDelta = target.stream
    ? (delta: string) => {
        if (delta === '') return;
        const opened = open();
        opened.write(opened.chunk({ content: delta }));
      }
    : () => undefined;
  let answer: AuxiliaryAnswer;
  try {
    answer = await answerAuxiliaryWhileConnected(target, deps, response, onDelta);
  } catch (error) {
    if (!stream) throw error;
    const failure = toAppError(error);
    if (failure.code === 'INTERNAL')
      input.log.error({ err: error }, 'streamed auxiliary OpenAI-compatible answer failed');
    (stream as CompletionStream).write(toOpenAIError(failure).body);
    response.end();
    return;
  }
  if (!target.stream) {
    response.json({
      id,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: target.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: answer.text, refusal: null },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: openAIUsage(answer.usage),
    });
    return;
  }
  const opened = open();
  opened.write(opened.chunk({}, 'stop'));
  if (target.includeUsage) opened.write(opened.usage(openAIUsage(answer.usage)));
  response.write('data: [DONE]\n\n');
  response.end();
}
