import { describe, expect, it } from 'vitest';
import { evaluateExpression, ExpressionError, formatNumber } from './evaluate-expression';

describe('evaluateExpression', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['2 ^ 3 ^ 2', 512],
    ['2 ** 10', 1024],
    ['-2 ^ 2', -4],
    ['10 % 4', 2],
    ['sqrt(16) + abs(-3)', 7],
    ['round(2.71828, 2)', 2.72],
    ['max(1, 7, 3) - min(4, 2)', 5],
    ['1_000 * 3', 3000],
    ['1.5e3 / 3', 500],
    ['2 × 3 ÷ 4', 1.5],
    ['log(1000)', 3],
  ])('%s = %d', (expression, expected) => {
    expect(evaluateExpression(expression)).toBeCloseTo(expected, 10);
  });

  it('knows pi and e', () => {
    expect(evaluateExpression('2 * pi')).toBeCloseTo(2 * Math.PI);
    expect(evaluateExpression('ln(e)')).toBe(1);
  });

  it.each([
    ['', 'empty'],
    ['1 +', 'ends too early'],
    ['(1 + 2', 'Expected ")"'],
    ['1 / 0', 'Division by zero'],
    ['process(1)', 'Unknown name "process"'],
    ['globalThis.x', 'Unexpected character "."'],
    ['constructor', 'Unknown name'],
    ['1; 2', 'Unexpected character ";"'],
    ['sqrt(1, 2)', 'takes 1 argument'],
    ['"a"', 'Unexpected character'],
  ])('rejects %j (%s)', (expression, message) => {
    expect(() => evaluateExpression(expression)).toThrow(ExpressionError);
    expect(() => evaluateExpression(expression)).toThrow(message);
  });

  it('refuses runaway nesting and length', () => {
    expect(() => evaluateExpression(`${'('.repeat(200)}1${')'.repeat(200)}`)).toThrow('nested too deeply');
    expect(() => evaluateExpression('1+'.repeat(600) + '1')).toThrow('longer than');
  });

  it('formats without binary noise', () => {
    expect(formatNumber(evaluateExpression('0.1 + 0.2'))).toBe('0.3');
    expect(formatNumber(1 / 0)).toBe('Infinity');
    expect(formatNumber(42)).toBe('42');
  });
});
