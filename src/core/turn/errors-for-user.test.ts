import { describe, expect, it } from 'vitest';
import { ContextOverBudgetError } from '../context';
import { userFacingError } from './errors-for-user';

describe('userFacingError', () => {
  it('names the budget when the context cannot carry the message, never INTERNAL', () => {
    expect(userFacingError(new ContextOverBudgetError(1115, 1050))).toEqual({
      code: 'CONTEXT_OVERFLOW',
      message: expect.stringContaining("at least 1115 tokens, above the chat's budget of 1050"),
    });
  });

  it('keeps unknown errors INTERNAL', () => {
    expect(userFacingError(new Error('boom')).code).toBe('INTERNAL');
  });
});
