import { pino, type DestinationStream, type Logger } from 'pino';
import { currentLogContext } from '../observability/log-context';

export type { Logger };

/**
 * Values that must never reach a log line, whatever structure they hide in (an error's cause, a config object):
 * every written line is scrubbed of them. Short values are ignored (they would match ordinary text).
 */
export class SecretList {
  private readonly values = new Set<string>();

  constructor(values: Iterable<string | undefined | null> = []) {
    for (const value of values) this.add(value);
  }

  add(value: string | undefined | null): void {
    if (!value || value.length < 8) return;
    this.values.add(value);
    // As it appears inside a JSON string.
    this.values.add(JSON.stringify(value).slice(1, -1));
  }

  scrub(line: string): string {
    let result = line;
    for (const value of this.values) if (result.includes(value)) result = result.split(value).join('[redacted]');
    return result;
  }
}

/** Keys whose values are secrets or message content, at the top level and one level down. */
const SENSITIVE_KEYS = [
  'authorization', 'cookie', 'token', 'apiKey', 'openAIApiKey', 'api_key', 'password', 'secret', 'adminToken', 'authSecret',
  'content', 'text', 'delta', 'summary', 'messages', 'prompt',
];
const REDACT_PATHS = [
  ...SENSITIVE_KEYS, ...SENSITIVE_KEYS.map((key) => `*.${key}`),
  '*.headers.authorization', '*.headers.cookie', '*.configuration.apiKey', 'err.config.headers.Authorization',
];

export interface LoggerOptions {
  level: string;
  pretty?: boolean;
  name?: string;
  /** Known secret values scrubbed from every line (API keys, tokens, database passwords). */
  secrets?: SecretList;
  /** Where lines go (default stdout); tests capture them here. */
  destination?: DestinationStream;
}

/**
 * One structured logger: pretty in a terminal, JSON otherwise. Every line carries the ids of the request, socket
 * event, turn, job or model call it was written in (log-context.ts); secrets and message content are redacted
 * by key, and known secret values are scrubbed from the written line whatever key they hide under.
 */
export function createLogger(options: LoggerOptions): Logger {
  const pretty = !options.destination && (options.pretty ?? Boolean(process.stdout.isTTY));
  const secrets = options.secrets;
  const settings = {
    level: options.level,
    name: options.name,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    mixin: () => ({ ...currentLogContext() }),
    ...(secrets ? { hooks: { streamWrite: (line: string) => secrets.scrub(line) } } : {}),
    transport: pretty ? { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } } : undefined,
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
