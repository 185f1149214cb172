import type { ErrorBody } from '../../shared/errors';
import { ContextOverBudgetError } from '../context';
import { isAppError } from '../errors/app-error';
import { isModelCallError } from '../errors/model-call-error';

/**
 * The error of an answer cut off by a server restart (its process died mid-answer; the sweeper found its lease
 * expired) that is not run again: RESUME_INTERRUPTED_TURNS=fail, or its re-run was cut off too.
 */
export const INTERRUPTED_ANSWER_ERROR: ErrorBody = {
  code: 'INTERRUPTED',
  message: 'This answer was cut off by a server restart. Your message is saved; press Retry to answer it again.',
};

/** Turn-ending errors, as the user is told about them (no provider internals, no stack). */
export function userFacingError(error: unknown): ErrorBody {
  if (isAppError(error)) return { code: error.code, message: error.message };
  // The pack's fixed parts (system prompt, tool definitions, saved memories, summary, pinned messages) leave too
  // little room for the message even condensed: a Retry alone cannot help, so the budget is named.
  if (error instanceof ContextOverBudgetError) {
    return {
      code: 'CONTEXT_OVERFLOW',
      message: `This chat's context cannot carry the message: the answer needs at least ${error.required} tokens, above the chat's budget of ${error.budget}. Your message is saved; unpin messages or start a new chat.`,
    };
  }
  if (isModelCallError(error)) {
    switch (error.kind) {
      case 'timeout':
        return {
          code: 'PROVIDER_TIMEOUT',
          message: 'The model did not answer in time. Your message is saved; try again.',
        };
      case 'context_overflow':
        return {
          code: 'CONTEXT_OVERFLOW',
          message: 'The conversation was too long for the model even after summarizing. Your message is saved.',
        };
      case 'rate_limited':
        return {
          code: 'PROVIDER_ERROR',
          message: 'The model provider is rate limiting us. Your message is saved; try again in a moment.',
        };
      default:
        return {
          code: 'PROVIDER_ERROR',
          message: 'The model provider failed to answer. Your message is saved; try again.',
        };
    }
  }
  return { code: 'INTERNAL', message: 'Something went wrong while answering. Your message is saved; try again.' };
}
