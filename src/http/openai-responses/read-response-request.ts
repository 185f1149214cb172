import type { OpenAIClientSettings } from '../../core/context/types';
import { AppError } from '../../core/errors/app-error';
import { joinInstructions } from '../openai-facade/chat-request';
import type { FacadeHttpDeps } from '../openai-facade/facade-deps';
import { checkModel } from '../openai-facade/facade-request';
import { responseToolsOf, type ResponseTools } from './response-tools';
import { parseResponseBody, responseInputOf, type ResponseBody, type ResponseInput } from './responses-request';

/** previous_response_id and conversation together: 400, as OpenAI answers. */
function refuseBothStates(body: ResponseBody): void {
  if (body.previous_response_id && body.conversation)
    throw new AppError(
      'VALIDATION',
      "previous_response_id: mutually exclusive with 'conversation'; send only one of them.",
      { details: { field: 'previous_response_id' } },
    );
}

/** What a Responses request asks for, read and checked before anything is spent or stored. */
export interface ReadRequest {
  body: ResponseBody;
  tools: ResponseTools;
  input: ResponseInput;
  /** The client's settings for the thread: its instructions, this response's, and its tools. */
  client: OpenAIClientSettings;
}

/** Reads a POST /v1/responses body (or input_tokens'): the input, the tools, the instructions, the model. */
export function readResponseRequest(raw: unknown, facade: FacadeHttpDeps): ReadRequest {
  const body = parseResponseBody(raw);
  refuseBothStates(body);
  const tools = responseToolsOf(body.tools ?? [], facade.serverToolNames(), facade.maxToolDescriptionChars);
  const input = responseInputOf(body, {
    maxInstructionsChars: facade.maxClientInstructionsChars,
    continuing: Boolean(body.previous_response_id || body.conversation),
  });
  const responseInstructions = joinInstructions(
    [body.instructions ?? ''],
    facade.maxClientInstructionsChars,
    'instructions',
  );
  checkModel(body.model, facade);
  return { body, tools, input, client: { instructions: input.instructions, responseInstructions, tools: tools.tools } };
}
