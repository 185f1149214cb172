import { pino, type DestinationStream, type Logger } from 'pino';
import type { Env } from '../config/env';
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

/** The password of a connection URL, if it has one. */
function passwordOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}

/** Query parameters whose values are credentials (`?api-key=`, `?token=`, `?sig=`, ...). */
const SECRET_PARAMETER = /key|token|secret|password|passwd|auth|sig|credential/i;

/**
 * The credentials a URL carries: its user name and password, and the values of query parameters named like
 * credentials (an endpoint URL such as `https://user:key@gateway/v1?api-key=...`).
 */
export function credentialsOfUrl(url: string | undefined): string[] {
  if (!url) return [];
  try {
    const parsed = new URL(url);
    const values = [
      decodeURIComponent(parsed.username),
      decodeURIComponent(parsed.password),
      parsed.username,
      parsed.password,
    ];
    if (parsed.username && parsed.password) values.push(`${parsed.username}:${parsed.password}`);
    for (const [name, value] of parsed.searchParams)
      if (SECRET_PARAMETER.test(name)) values.push(value, encodeURIComponent(value));
    return values.filter(Boolean);
  } catch {
    return [];
  }
}

/** A URL without its credentials, for logs and labels: `https://[redacted]@host/v1?api-key=[redacted]`. */
export function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username) parsed.username = 'redacted';
    if (parsed.password) parsed.password = 'redacted';
    for (const name of [...parsed.searchParams.keys()])
      if (SECRET_PARAMETER.test(name)) parsed.searchParams.set(name, 'redacted');
    return parsed.toString();
  } catch {
    return '[unparsable url]';
  }
}

/**
 * The secrets the environment holds: API key, auth secret, admin and metrics tokens, database and Redis passwords,
 * credentials inside OPENAI_BASE_URL, ANTHROPIC_API_KEY and credentials inside ANTHROPIC_BASE_URL, the tool secrets (webhook secret, MCP header and env values from variables), and
 * the /v1 service keys (OPENAI_FACADE_KEYS).
 */
export function secretsOfEnv(
  env: Pick<
    Env,
    | 'OPENAI_API_KEY'
    | 'AUTH_SECRET'
    | 'ADMIN_TOKEN'
    | 'METRICS_TOKEN'
    | 'DATABASE_URL'
    | 'REDIS_URL'
    | 'OPENAI_BASE_URL'
  > &
    Partial<
      Pick<
        Env,
        'TOOL_WEBHOOK_SECRET' | 'toolSources' | 'OPENAI_FACADE_KEYS' | 'ANTHROPIC_API_KEY' | 'ANTHROPIC_BASE_URL'
      >
    >,
): SecretList {
  return new SecretList([
    env.OPENAI_API_KEY,
    env.AUTH_SECRET,
    env.ADMIN_TOKEN,
    env.METRICS_TOKEN,
    passwordOf(env.DATABASE_URL),
    passwordOf(env.REDIS_URL),
    ...credentialsOfUrl(env.OPENAI_BASE_URL),
    env.ANTHROPIC_API_KEY,
    ...credentialsOfUrl(env.ANTHROPIC_BASE_URL),
    env.TOOL_WEBHOOK_SECRET,
    ...(env.toolSources?.secrets ?? []),
    ...(env.OPENAI_FACADE_KEYS ?? []),
  ]);
}

/** Keys whose values are secrets or message content, at the top level and one level down. */
const SENSITIVE_KEYS = [
  'authorization',
  'cookie',
  'token',
  'apiKey',
  'openAIApiKey',
  'api_key',
  'password',
  'secret',
  'adminToken',
  'authSecret',
  'content',
  'text',
  'delta',
  'summary',
  'messages',
  'prompt',
];
const REDACT_PATHS = [
  ...SENSITIVE_KEYS,
  ...SENSITIVE_KEYS.map((key) => `*.${key}`),
  '*.headers.authorization',
  '*.headers.cookie',
  '*.configuration.apiKey',
  'err.config.headers.Authorization',
];

/** A model provider's error: its message may quote what the user wrote (content filters, bad requests). */
function isProviderError(value: unknown): value is Error & { kind?: string; status?: number; retryable?: boolean } {
  if (!(value instanceof Error)) return false;
  return value.name === 'ModelCallError' || typeof (value as { status?: unknown }).status === 'number';
}

/**
 * At info and above a provider error keeps its kind and status, not its message (which may quote the user);
 * the whole error follows on a debug line when debug is on.
 */
function logMethod(this: Logger, args: unknown[], method: (...args: unknown[]) => void, level: number): void {
  const [first, ...rest] = args;
  const err = first && typeof first === 'object' ? (first as { err?: unknown }).err : undefined;
  if (level < 30 || !isProviderError(err)) {
    method.apply(this, args);
    return;
  }
  const summary = {
    type: err.name,
    kind: err.kind,
    status: err.status,
    retryable: err.retryable,
    message: '[provider message omitted above debug level]',
  };
  method.apply(this, [{ ...(first as object), err: summary }, ...rest]);
  if (this.isLevelEnabled('debug')) this.debug({ err }, 'provider error detail');
}

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
    hooks: {
      logMethod,
      ...(secrets ? { streamWrite: (line: string) => secrets.scrub(line) } : {}),
    },
    transport: pretty
      ? { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } }
      : undefined,
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
