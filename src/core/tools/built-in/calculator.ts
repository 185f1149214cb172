import { z } from 'zod';
import { defineTool } from '../types';
import { evaluateExpression, formatNumber } from './evaluate-expression';

/** Exact arithmetic for the model, inline. */
export const calculatorTool = defineTool({
  name: 'calculator',
  shortDescription: 'Exact arithmetic (+ - * / % ^, sqrt, round, log, sin, min, max…).',
  description:
    'Exact arithmetic: + - * / % ^, parentheses, pi, e, sqrt, abs, round(x, digits), floor, ceil, ln, log, log2, exp, sin, cos, tan, min, max.',
  schema: z.object({
    expression: z.string().min(1).max(1000).describe('The expression, e.g. "(17.5 * 3) ^ 2 / sqrt(2)"'),
  }),
  mode: 'inline',
  timeoutMs: 2000,
  async run({ expression }) {
    return `${expression} = ${formatNumber(evaluateExpression(expression))}`;
  },
});
