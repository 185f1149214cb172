import { Redis } from 'ioredis';
import pg from 'pg';
import { tokenizerWork } from '../../src/core/context';
import { chatModelWork } from '../../src/llm/stream-chat';
import { promptWork } from '../../src/core/turn/stream-answer';

/** The work of one turn, in figures that do not depend on the machine (only on the code and the data). */
export interface WorkFigures {
  /** Calls of node-postgres' `Client#query`: each one a round trip (node-postgres does not pipeline). */
  sqlRoundTrips: number;
  /** The round trips that are not transaction control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE). */
  sqlStatements: number;
  /** Rows Postgres returned. */
  sqlRows: number;
  /** Commands sent by ioredis (each command of a pipeline or MULTI counts, MULTI and EXEC too). */
  redisCommands: number;
  /** Texts the token counters were asked to count (src/core/context/token-counter.ts, src/llm/count-chat-tokens.ts). */
  tokenizerCalls: number;
  /** Texts the tokenizer encoded (not found among the counts remembered), and their characters. */
  tokenizerEncoded: number;
  tokenizerChars: number;
  /** `JSON.parse` calls and the characters they read. */
  jsonParses: number;
  jsonChars: number;
  /** Chat models bound to a tool list (a new ChatOpenAI and OpenAI client each): 0 once the lists are warm. */
  modelBindings: number;
  /** Tool-schema tokens the chat calls sent (our count of each call's offered list): a tool in every prompt shows. */
  toolSchemaTokens: number;
}

export const FIGURES: readonly (keyof WorkFigures)[] = [
  'sqlRoundTrips',
  'sqlStatements',
  'sqlRows',
  'redisCommands',
  'tokenizerCalls',
  'tokenizerEncoded',
  'tokenizerChars',
  'jsonParses',
  'jsonChars',
  'modelBindings',
  'toolSchemaTokens',
];

/** What a counted window saw: the figures, and which statements and commands made them (for a failure's message). */
export interface CountedWork {
  figures: WorkFigures;
  /** Statement texts (whitespace collapsed, cut at 100 characters) and Redis command names, with their counts. */
  statements: Record<string, number>;
  commands: Record<string, number>;
}

const TRANSACTION_CONTROL = /^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|START TRANSACTION)\b/i;

/** The text of a `Client#query` call's first argument (a string or a query config). */
function statementText(first: unknown): string {
  const text = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '?');
  return text.replace(/\s+/g, ' ').trim().slice(0, 100);
}

/**
 * Counts the work this process does between `start()` and `stop()`: node-postgres queries (Prisma's adapter and the
 * hot path's raw SQL both go through `pg.Client#query`), ioredis commands (`Redis#sendCommand`, every connection of
 * the process: the test runs no workers or sweeper, so only the request path sends any), token counts and
 * `JSON.parse`. `inFlight()` tells whether a statement or command is still waiting for its answer.
 */
export function installWorkCounter(): {
  start(): void;
  stop(): CountedWork;
  inFlight(): number;
  /** Figures counted so far in the current window (0s outside one). */
  total(): number;
  uninstall(): void;
} {
  let counting = false;
  let pending = 0;
  let figures = emptyFigures();
  let statements = new Map<string, number>();
  let commands = new Map<string, number>();
  const tokenizerAtStart = { ...tokenizerWork };
  let bindingsAtStart = chatModelWork.bindings;
  let schemaTokensAtStart = promptWork.toolSchemaTokens;

  const clientPrototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const originalQuery = clientPrototype.query;
  clientPrototype.query = function query(this: unknown, ...args: unknown[]) {
    if (!counting) return originalQuery.apply(this, args);
    const text = statementText(args[0]);
    figures.sqlRoundTrips += 1;
    if (!TRANSACTION_CONTROL.test(text)) figures.sqlStatements += 1;
    statements.set(text, (statements.get(text) ?? 0) + 1);
    pending += 1;
    let settled = false;
    const settle = (result: unknown) => {
      if (settled) return;
      settled = true;
      pending -= 1;
      const rows = (result as { rows?: unknown[] } | undefined)?.rows;
      if (counting && Array.isArray(rows)) figures.sqlRows += rows.length;
    };
    const last = args.at(-1);
    if (typeof last === 'function') {
      args[args.length - 1] = (error: unknown, result: unknown) => {
        settle(error ? undefined : result);
        return (last as (error: unknown, result: unknown) => unknown)(error, result);
      };
    }
    const config = args[0] as { callback?: (error: unknown, result: unknown) => unknown } | undefined;
    if (typeof config === 'object' && typeof config?.callback === 'function') {
      const callback = config.callback;
      config.callback = (error, result) => {
        settle(error ? undefined : result);
        return callback(error, result);
      };
    }
    const returned = originalQuery.apply(this, args);
    if (returned instanceof Promise) returned.then(settle, () => settle(undefined));
    return returned;
  };

  const redisPrototype = Redis.prototype as unknown as {
    sendCommand: (command: { name: string; promise: Promise<unknown> }, ...rest: unknown[]) => unknown;
  };
  const originalSend = redisPrototype.sendCommand;
  const seen = new WeakSet<object>();
  redisPrototype.sendCommand = function sendCommand(this: unknown, command, ...rest) {
    // A command can pass through sendCommand more than once (an offline queue flushed): it counts once.
    if (counting && !seen.has(command)) {
      seen.add(command);
      figures.redisCommands += 1;
      const name = command.name.toLowerCase();
      commands.set(name, (commands.get(name) ?? 0) + 1);
      pending += 1;
      command.promise.then(
        () => (pending -= 1),
        () => (pending -= 1),
      );
    }
    return originalSend.call(this, command, ...rest);
  };

  const originalParse = JSON.parse;
  JSON.parse = function parse(text: string, reviver?: Parameters<typeof JSON.parse>[1]) {
    if (counting) {
      figures.jsonParses += 1;
      figures.jsonChars += typeof text === 'string' ? text.length : String(text).length;
    }
    return originalParse(text, reviver);
  } as typeof JSON.parse;

  return {
    start() {
      figures = emptyFigures();
      statements = new Map();
      commands = new Map();
      Object.assign(tokenizerAtStart, tokenizerWork);
      bindingsAtStart = chatModelWork.bindings;
      schemaTokensAtStart = promptWork.toolSchemaTokens;
      counting = true;
    },
    stop() {
      counting = false;
      figures.tokenizerCalls = tokenizerWork.calls - tokenizerAtStart.calls;
      figures.tokenizerEncoded = tokenizerWork.encoded - tokenizerAtStart.encoded;
      figures.tokenizerChars = tokenizerWork.chars - tokenizerAtStart.chars;
      figures.modelBindings = chatModelWork.bindings - bindingsAtStart;
      figures.toolSchemaTokens = promptWork.toolSchemaTokens - schemaTokensAtStart;
      return { figures, statements: sorted(statements), commands: sorted(commands) };
    },
    inFlight: () => pending,
    total: () =>
      figures.sqlRoundTrips +
      figures.redisCommands +
      figures.jsonParses +
      (tokenizerWork.calls - (counting ? tokenizerAtStart.calls : tokenizerWork.calls)),
    uninstall() {
      clientPrototype.query = originalQuery;
      redisPrototype.sendCommand = originalSend;
      JSON.parse = originalParse;
    },
  };
}

function emptyFigures(): WorkFigures {
  return Object.fromEntries(FIGURES.map((figure) => [figure, 0])) as unknown as WorkFigures;
}

function sorted(counts: Map<string, number>): Record<string, number> {
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}
