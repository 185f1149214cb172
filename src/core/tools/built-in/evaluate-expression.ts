/**
 * A safe arithmetic evaluator (no `eval`, no `Function`): a tokenizer and a recursive-descent parser over
 * numbers, + - * / % ^ (right-associative power), parentheses, unary signs, the constants pi and e, and the
 * functions below. Anything else is an error naming the position.
 */
import { ToolError } from '../tool-error';

const FUNCTIONS: Record<string, { arity: [number, number]; apply: (...values: number[]) => number }> = {
  sqrt: { arity: [1, 1], apply: Math.sqrt },
  abs: { arity: [1, 1], apply: Math.abs },
  round: { arity: [1, 2], apply: (value, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits },
  floor: { arity: [1, 1], apply: Math.floor },
  ceil: { arity: [1, 1], apply: Math.ceil },
  ln: { arity: [1, 1], apply: Math.log },
  log: { arity: [1, 1], apply: Math.log10 },
  log2: { arity: [1, 1], apply: Math.log2 },
  exp: { arity: [1, 1], apply: Math.exp },
  sin: { arity: [1, 1], apply: Math.sin },
  cos: { arity: [1, 1], apply: Math.cos },
  tan: { arity: [1, 1], apply: Math.tan },
  min: { arity: [1, 100], apply: Math.min },
  max: { arity: [1, 100], apply: Math.max },
};
const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E };
const MAX_LENGTH = 1000;
const MAX_DEPTH = 100;

type Token =
  | { kind: 'number'; value: number; at: number }
  | { kind: 'name'; value: string; at: number }
  | { kind: 'op'; value: string; at: number };

export class ExpressionError extends ToolError {
  override name = 'ExpressionError';
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  while (index < source.length) {
    const char = source[index] ?? '';
    if (/\s/.test(char)) {
      index += 1;
      continue;
    }
    const number = /^(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?/i.exec(source.slice(index));
    if (number) {
      tokens.push({ kind: 'number', value: Number(number[0].replace(/_/g, '')), at: index });
      index += number[0].length;
      continue;
    }
    const name = /^[a-z_][a-z0-9_]*/i.exec(source.slice(index));
    if (name) {
      tokens.push({ kind: 'name', value: name[0].toLowerCase(), at: index });
      index += name[0].length;
      continue;
    }
    if (source.startsWith('**', index)) {
      tokens.push({ kind: 'op', value: '^', at: index });
      index += 2;
      continue;
    }
    if ('+-*/%^(),×÷'.includes(char)) {
      tokens.push({ kind: 'op', value: char === '×' ? '*' : char === '÷' ? '/' : char, at: index });
      index += 1;
      continue;
    }
    throw new ExpressionError(`Unexpected character ${JSON.stringify(char)} at position ${index + 1}`);
  }
  return tokens;
}

class Parser {
  private position = 0;
  private depth = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): number {
    if (this.tokens.length === 0) throw new ExpressionError('The expression is empty');
    const value = this.sum();
    const extra = this.tokens[this.position];
    if (extra)
      throw new ExpressionError(`Unexpected ${JSON.stringify(String(extra.value))} at position ${extra.at + 1}`);
    return value;
  }

  private peek(value: string): boolean {
    const token = this.tokens[this.position];
    return token?.kind === 'op' && token.value === value;
  }

  private expect(value: string): void {
    if (!this.peek(value)) {
      const token = this.tokens[this.position];
      throw new ExpressionError(
        token ? `Expected "${value}" at position ${token.at + 1}` : `Expected "${value}" at the end`,
      );
    }
    this.position += 1;
  }

  private sum(): number {
    let value = this.product();
    while (this.peek('+') || this.peek('-')) {
      const op = this.tokens[this.position++]?.value;
      const right = this.product();
      value = op === '+' ? value + right : value - right;
    }
    return value;
  }

  private product(): number {
    let value = this.unary();
    while (this.peek('*') || this.peek('/') || this.peek('%')) {
      const op = this.tokens[this.position++]?.value;
      const right = this.unary();
      if ((op === '/' || op === '%') && right === 0) throw new ExpressionError('Division by zero');
      value = op === '*' ? value * right : op === '/' ? value / right : value % right;
    }
    return value;
  }

  private unary(): number {
    if (this.peek('-') || this.peek('+')) {
      const op = this.tokens[this.position++]?.value;
      const value = this.unary();
      return op === '-' ? -value : value;
    }
    return this.power();
  }

  private power(): number {
    const base = this.atom();
    if (this.peek('^')) {
      this.position += 1;
      return base ** this.unary();
    }
    return base;
  }

  private atom(): number {
    const token = this.tokens[this.position];
    if (!token) throw new ExpressionError('The expression ends too early');
    if (++this.depth > MAX_DEPTH) throw new ExpressionError('The expression is nested too deeply');
    try {
      this.position += 1;
      if (token.kind === 'number') return token.value;
      if (token.kind === 'op' && token.value === '(') {
        const value = this.sum();
        this.expect(')');
        return value;
      }
      if (token.kind === 'name') return this.named(token);
      throw new ExpressionError(`Unexpected "${token.value}" at position ${token.at + 1}`);
    } finally {
      this.depth -= 1;
    }
  }

  private named(token: Extract<Token, { kind: 'name' }>): number {
    // Own keys only: `constructor` and friends must not resolve through the prototype.
    const fn = Object.hasOwn(FUNCTIONS, token.value) ? FUNCTIONS[token.value] : undefined;
    if (!fn) {
      const constant = Object.hasOwn(CONSTANTS, token.value) ? CONSTANTS[token.value] : undefined;
      if (constant === undefined)
        throw new ExpressionError(`Unknown name "${token.value}" at position ${token.at + 1}`);
      return constant;
    }
    this.expect('(');
    const values = [this.sum()];
    while (this.peek(',')) {
      this.position += 1;
      values.push(this.sum());
    }
    this.expect(')');
    const [min, max] = fn.arity;
    if (values.length < min || values.length > max)
      throw new ExpressionError(
        `${token.value} takes ${min === max ? min : `${min} to ${max}`} argument(s), got ${values.length}`,
      );
    return fn.apply(...values);
  }
}

/** Evaluates an arithmetic expression; throws ExpressionError with a readable reason. */
export function evaluateExpression(source: string): number {
  if (source.length > MAX_LENGTH) throw new ExpressionError(`The expression is longer than ${MAX_LENGTH} characters`);
  const value = new Parser(tokenize(source)).parse();
  if (Number.isNaN(value)) throw new ExpressionError('The result is not a number');
  return value;
}

/** Formats a result without binary noise (0.1 + 0.2 -> 0.3). */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toPrecision(15)));
}
