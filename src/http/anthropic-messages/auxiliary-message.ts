import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import type { AuxiliaryAnswer, AuxiliaryDeps } from '../../core/facade/answer-auxiliary';
import { answerAuxiliaryWhileConnected } from '../openai-facade/auxiliary-response';
import { toAppError } from '../../errors/to-app-error';
import { MessageEventStream } from './message-answer';
import { anthropicUsage, contentOf, messageObject } from './message-object';

/** An auxiliary request (FACADE_AUXILIARY_PREFIXES) on /v1/messages: who asks, what, and whether it streams. */
export interface AuxiliaryMessageTarget {
  userId: string;
  model: string;
  instructions: string | null;
  content: string;
  stream: boolean;
}

/**
 * Answers a client's background request statelessly, as /v1/chat/completions does (nothing stored, no thread), in the
 * Messages API's shapes. A stream opens at the first token, so a refusal or an upstream failure before it is an HTTP
 * error in Anthropic's shape like any other.
 */
export async function answerAuxiliaryMessage(
  target: AuxiliaryMessageTarget,
  deps: AuxiliaryDeps,
  response: Response,
): Promise<void> {
  const frame = { id: `msg_aux_${randomUUID().replace(/-/g, '')}`, model: target.model };
  let stream: MessageEventStream | null = null;
  const open = () => (stream ??= new MessageEventStream(response, frame));
  let answer: AuxiliaryAnswer;
  try {
    answer = await answerAuxiliaryWhileConnected(target, deps, response, (delta) => {
      if (target.stream && delta !== '') open().text(delta);
    });
  } catch (error) {
    if (!stream) throw error;
    const failure = toAppError(error);
    if (failure.code === 'INTERNAL') deps.log.error({ err: error }, 'streamed auxiliary Anthropic answer failed');
    (stream as MessageEventStream).fail(failure);
    return;
  }
  const usage = anthropicUsage(answer.usage);
  if (target.stream) open().end({ toolCalls: [], stopReason: 'end_turn', usage }, new Map());
  else
    response.json(
      messageObject({ ...frame, content: contentOf(answer.text, [], new Map()), stopReason: 'end_turn', usage }),
    );
}
