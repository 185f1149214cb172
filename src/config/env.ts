import { isIP } from 'node:net';
import { z } from 'zod';
import { productionProblem, webhookSecretProblem } from './production-checks';
import { parseToolSources, type ToolSources } from './tool-sources';
import { parseSpendLimit } from '../core/spend/spend-limit';
import { isTimeZone } from '../core/spend/spend-period';

/**
 * The one reader of the environment. Parsed once at boot; a bad value stops the start with one line
 * naming the variable and what is wrong. Every variable is documented in README.md and .env.example.
 */

const integer = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);
const optionalInteger = (min = 1) => z.coerce.number().int().min(min).optional();
/** A yes/no flag; unset stays undefined, so the caller picks a default that may depend on other variables. */
const optionalFlag = () =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .optional()
    .transform((value) => (value === undefined ? undefined : ['true', '1', 'yes'].includes(value)));
const optionalString = z.string().trim().min(1).optional().catch(undefined);
/** A duration in seconds: `90d`, `12h`, `30m`, `45s`, or a number of seconds. */
const duration = (fallback: string) =>
  z
    .string()
    .trim()
    .default(fallback)
    .transform((value, context) => {
      const match = /^(\d+)\s*([smhd]?)$/i.exec(value);
      const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }[(match?.[2] ?? '').toLowerCase()];
      if (!match || unit === undefined || Number(match[1]) <= 0) {
        context.addIssue({
          code: 'custom',
          message: `expected a duration such as 90d, 12h, 30m or 45s, got "${value}"`,
        });
        return z.NEVER;
      }
      return Number(match[1]) * unit;
    });

/**
 * One model's prices per million tokens; a cached-input price defaults to the input price. `cacheWrite` (5-minute
 * cache entries) and `cacheWrite1h` price the prompt tokens a provider wrote to its cache (Anthropic's
 * `cache_creation_input_tokens`); loadEnv keeps the one PROMPT_CACHE_TTL selects (default 1.25× or 2× the input).
 */
const modelPrice = z
  .strictObject({
    input: z.number().min(0),
    cachedInput: z.number().min(0).optional(),
    cacheWrite: z.number().min(0).optional(),
    cacheWrite1h: z.number().min(0).optional(),
    output: z.number().min(0),
  })
  .transform((price) => ({
    input: price.input,
    cachedInput: price.cachedInput ?? price.input,
    cacheWrite: price.cacheWrite ?? price.input * 1.25,
    cacheWrite1h: price.cacheWrite1h ?? price.input * 2,
    output: price.output,
  }));

/** MODEL_PRICES: a JSON object of model name → prices; unset: no prices (costs show tokens only). */
const modelPrices = z
  .string()
  .trim()
  .optional()
  .transform((value, context) => {
    if (!value) return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      context.addIssue({
        code: 'custom',
        message: 'expected JSON such as {"gpt-4o-mini":{"input":0.15,"cachedInput":0.075,"output":0.6}}',
      });
      return z.NEVER;
    }
    const result = z.record(z.string().min(1), modelPrice).safeParse(parsed);
    if (!result.success) {
      const issue = result.error.issues[0];
      context.addIssue({
        code: 'custom',
        message: `${issue?.path.join('.') || 'value'}: ${issue?.message ?? 'invalid'} (per model: input, cachedInput, cacheWrite, cacheWrite1h, output per million tokens)`,
      });
      return z.NEVER;
    }
    return result.data;
  });

/** A spend limit, `AMOUNT/PERIOD` (`0.50/day`, `200000tokens/month`); unset: none. */
const spendLimit = z
  .string()
  .trim()
  .optional()
  .transform((value, context) => {
    if (!value) return undefined;
    const parsed = parseSpendLimit(value);
    if (!parsed.ok) {
      context.addIssue({ code: 'custom', message: parsed.error });
      return z.NEVER;
    }
    return parsed.limit;
  });

/** The built-in tools TOOLS_OFF may turn off (by their names; src/tools checks them against the tools). */
export const OPTIONAL_TOOLS = ['calculator', 'current_time', 'analyze_thread'] as const;
export type OptionalTool = (typeof OPTIONAL_TOOLS)[number];

/** A comma-separated setting's items, trimmed, empty ones left out. */
const commaList = (value: string): string[] =>
  value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);
/** TRUST_PROXY's forms, as express' `trust proxy` takes them. */
function isTrustProxy(value: string): boolean {
  if (/^(true|false|\d+)$/.test(value)) return true;
  return value
    .split(',')
    .map((part) => part.trim())
    .every((part) => {
      if (PROXY_NAMES.has(part)) return true;
      const [address = '', bits, extra] = part.split('/');
      if (extra !== undefined || isIP(address) === 0) return false;
      return bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (isIP(address) === 4 ? 32 : 128));
    });
}

/** TRUST_PROXY as express' `trust proxy` setting. */
export function trustProxySetting(value: string): boolean | number | string[] {
  if (value === 'true' || value === 'false') return value === 'true';
  if (/^\d+$/.test(value)) return Number(value);
  return value.split(',').map((part) => part.trim());
}

const schema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: integer(3000, 0),
  HOST: z.string().default('0.0.0.0'),
  DATA_DIR: z.string().default('.data'),
  DATABASE_URL: z.string().url().optional(),
  REDIS_URL: z.string().url().optional(),
  /** Key prefix for BullMQ queues and other Redis keys (tests use their own). */
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, _ and - only')
    .default('chat'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  AUTH_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Default true, false in production (set below: a schema default would hide that it was unset). */
  ALLOW_GUESTS: optionalFlag(),
  /** Lifetime of one guest token, in seconds (a refresh issues the next one). */
  GUEST_TOKEN_TTL: duration('30d'),
  /** Absolute lifetime of a guest session from its first token, in seconds: no refresh goes past it. */
  GUEST_MAX_AGE: duration('90d'),
  /** When set, every bearer token must carry this `iss` (tokens this server signs carry it too). */
  JWT_ISSUER: optionalString,
  /** When set, every bearer token must carry this `aud` (tokens this server signs carry it too). */
  JWT_AUDIENCE: optionalString,
  CORS_ORIGINS: z.string().default(''),
  /** Whether CORS answers allow credentials (cookies) for CORS_ORIGINS; the API itself uses bearer tokens. */
  CORS_CREDENTIALS: optionalFlag(),
  /** express' `trust proxy`: which peers' X-Forwarded-For names the client (`request.ip`). Default: none. */
  TRUST_PROXY: z
    .string()
    .trim()
    .default('false')
    .refine(
      isTrustProxy,
      'false, true, a hop count, or comma-separated addresses/CIDRs (or loopback, linklocal, uniquelocal)',
    ),

  OPENAI_API_KEY: optionalString,
  OPENAI_BASE_URL: z.string().url().optional(),
  /** Anthropic's Messages API as the upstream (CHAT_PROVIDER=anthropic, inferred when only Anthropic settings are set). */
  ANTHROPIC_API_KEY: optionalString,
  /** Default Anthropic's API; the SDK appends `/v1/messages`. */
  ANTHROPIC_BASE_URL: z.string().url().optional(),
  /** Which upstream the chat and the summarizer call; default inferred from which endpoint settings are set. */
  CHAT_PROVIDER: z.enum(['openai', 'anthropic']).optional(),
  /** Extended thinking of Anthropic models: `budget_tokens` of each chat call (at least 1,024); unset: off. */
  ANTHROPIC_THINKING_BUDGET_TOKENS: optionalInteger(1024),
  /** `allow`: serve the built-in offline model when no endpoint is configured; `refuse`: stop the start instead. */
  OFFLINE_MODEL: z.enum(['allow', 'refuse']).optional(),
  CHAT_MODEL: z.string().min(1).default('gpt-4o-mini'),
  SUMMARY_MODEL: optionalString,
  SYSTEM_PROMPT: optionalString,
  SYSTEM_PROMPT_FILE: optionalString,
  CONTEXT_MAX_INPUT_TOKENS: optionalInteger(256),
  RESERVED_OUTPUT_TOKENS: optionalInteger(16),
  CHAT_TEMPLATE_COMPAT: z.enum(['openai', 'strict']).default('openai'),
  // Send prompt_cache_key (a hash of the thread id) with chat calls: auto = only to OpenAI's own API.
  PROMPT_CACHE_KEY: z.enum(['auto', 'on', 'off']).default('auto'),
  // How a fold asks for its segment: continuing the thread's chat prompt (cached) or in a prompt of its own.
  FOLD_PROMPT: z.enum(['auto', 'standalone']).default('auto'),
  // Chat titles after a thread's first exchange: `model`, a short title by the summarizer model in a background job
  // (one small call per thread, purpose `title`); `words`, the first message's words (no call). The offline model
  // always uses the words.
  CHAT_TITLES: z.enum(['model', 'words']).default('model'),

  // Unset context variables are derived from the model's window (src/core/context/derive-context-defaults.ts).
  SUMMARY_TRIGGER: optionalString,
  SUMMARY_KEEP: optionalString,
  SUMMARY_MAX_TOKENS: optionalInteger(64),
  SUMMARY_INPUT_MAX_TOKENS: optionalInteger(256),
  PINNED_MAX_TOKENS: optionalInteger(0),
  /** Tokens of the auto-recall slot of every pack; default derived from the window (see context-settings-from-env); 0 turns it off. */
  RECALL_TOKENS: optionalInteger(0),
  /**
   * How long the provider keeps a prompt prefix cached, in seconds (`5m`, `1h`, `300`): a thread quiet for longer is
   * folded in the background (its cache is cold, so the fold invalidates nothing). Default 5 minutes.
   */
  PROMPT_CACHE_TTL: duration('5m'),
  /** The least an idle fold folds (tokens beyond the keep policy); default twice SUMMARY_MAX_TOKENS. */
  IDLE_FOLD_MIN_TOKENS: optionalInteger(1),
  /** Prices per million tokens by model (JSON), for the admin console's estimated costs; no built-in prices. */
  MODEL_PRICES: modelPrices,
  /** Default spend limit of signed-in users (`0.50/day`, `200000tokens/month`); unset: unlimited (README "Spend limits"). */
  SPEND_LIMIT_USER: spendLimit,
  /** Default spend limit of each guest; unset: unlimited. */
  SPEND_LIMIT_GUEST: spendLimit,
  /** What all the guests of one client address (IPv6 by /64) may spend together; unset: no such total. */
  SPEND_LIMIT_GUESTS_PER_ADDRESS: spendLimit,
  /** The time zone spend periods (day, week, month) and the admin costs' days follow (an IANA name). */
  SPEND_LIMIT_TIMEZONE: z
    .string()
    .trim()
    .default('UTC')
    .refine(isTimeZone, 'an IANA time zone such as UTC or Europe/Paris'),
  /**
   * Spend limits enforced: default on when a SPEND_LIMIT_* default is set. `on` without defaults enforces only the
   * limits admins set on users and groups; `off` spends no statement on them.
   */
  SPEND_LIMITS: z.enum(['on', 'off']).optional(),
  /**
   * The claim of host-minted tokens naming their user's spend-limit groups (a name or a list): the user is kept a
   * member of exactly the named groups that exist (admins create groups and their limits); unset: admins place users.
   */
  SPEND_LIMIT_GROUP_CLAIM: z
    .string()
    .trim()
    .optional()
    .refine(
      (claim) =>
        claim === undefined ||
        (/^[A-Za-z0-9_.:/-]{1,100}$/.test(claim) &&
          !['sub', 'exp', 'iat', 'nbf', 'iss', 'aud', 'jti', 'kind', 'role', 'orig_iat'].includes(claim)),
      'a claim name (letters, digits, _ . : / -) other than the registered ones (sub, exp, iat, ...) and kind/role',
    ),
  /** Tokens of the user's saved memories in every pack; default a tenth of the budget, at most 1,000 (0: none). */
  USER_MEMORY_TOKENS: optionalInteger(0),
  /** Saved memories one user may keep; past it, adding one answers QUOTA_EXCEEDED. */
  MAX_MEMORY_ITEMS: integer(200, 1),
  /** Saved memory writes (POST/PATCH/DELETE /api/memory, the save_memory tool) per user per minute, across processes. */
  MEMORY_WRITES_PER_MINUTE: integer(30, 1),
  /**
   * The model's save_memory tool: `on` saves at once; `confirm` (default) proposes an item the user approves or
   * dismisses (web app, POST /api/memory/:id/approve) before it reaches any prompt; `off` does not offer the tool.
   */
  SAVE_MEMORY_TOOL: z.enum(['on', 'confirm', 'off']).default('confirm'),
  /**
   * Built-in tools not offered to the model, comma-separated: `calculator`, `current_time`, `analyze_thread` (the
   * background-tool demo). Each costs its schema in every prompt. save_memory has SAVE_MEMORY_TOOL; search_transcript
   * and read_tool_result serve recall and condensed results and are always offered where they apply.
   */
  TOOLS_OFF: z
    .string()
    .trim()
    .default('')
    .transform((value, context) => {
      const names = commaList(value);
      const unknown = names.filter((name) => !(OPTIONAL_TOOLS as readonly string[]).includes(name));
      if (unknown.length > 0) {
        context.addIssue({
          code: 'custom',
          message: `not a built-in tool that can be turned off: ${unknown.join(', ')} (expected: ${OPTIONAL_TOOLS.join(', ')})`,
        });
        return z.NEVER;
      }
      return names as OptionalTool[];
    }),
  /** Where auto-recall and search_transcript look by default: this thread only, or all of the user's threads. */
  RECALL_SCOPE: z.enum(['thread', 'user']).default('user'),
  /** Auto-recall's relevance gate: a recall slot only where recall is likely to add something (core/context/recall-gate). */
  RECALL_GATE: z.enum(['on', 'off']).default('on'),
  /** A recall slot, once shown, held in place until the next fold (sticky recall); off: a slot serves its own turn. */
  RECALL_STICKY: z.enum(['on', 'off']).default('on'),
  /** Tokens held recall notes may take together until the next fold; a slot past it serves its own turn only. */
  RECALL_HELD_TOKENS: optionalInteger(0),
  /** Days a thread may stay idle before the sweeper erases it; unset keeps threads forever. */
  RETENTION_DAYS: optionalInteger(1),
  /** Postgres text search configuration of the transcript index; changing it needs `npm run search:reindex`. */
  SEARCH_LANGUAGE: z
    .string()
    .regex(/^[a-z_]+$/, 'a Postgres text search configuration name, e.g. english, french, simple')
    .default('english'),

  MAX_MESSAGE_CHARS: integer(32_000, 1),
  MAX_QUEUED_TURNS: integer(5, 0),
  TURN_TIMEOUT_MS: integer(120_000, 1000),
  MODEL_MAX_RETRIES: integer(2, 0),
  MAX_TOOL_ROUNDS: integer(8, 1),
  /** Tool calls one assistant message may make; the calls past it are answered "not run" (the model and the user see why). */
  MAX_TOOL_CALLS_PER_MESSAGE: integer(8, 1),
  /** Follow-up turns (after async tool results) per user message that may call tools again; the next one answers without tools. */
  MAX_TOOL_FOLLOW_UPS: integer(3, 0),
  /** Async tool runs running at once per thread and per user; calls past them are answered "not run". */
  MAX_ASYNC_RUNS_PER_THREAD: integer(4, 1),
  MAX_ASYNC_RUNS_PER_USER: integer(10, 1),
  /** Threads one user may keep (forks count); past it, creating one answers QUOTA_EXCEEDED. */
  MAX_THREADS_PER_USER: integer(1000, 1),
  /** Forks (POST /api/threads/:id/fork) per user per minute, across processes; past it RATE_LIMITED with Retry-After. */
  FORKS_PER_MINUTE: integer(10, 1),
  /**
   * Most transcript messages one fork or edit copies (the fork point's seq): a branch later in a longer thread answers
   * TOO_LARGE, so looping forks of a huge thread cannot write millions of rows. Default 2,000: with
   * MAX_THREADS_PER_USER (1,000) one user's forks hold at most 2,000,000 copied messages (README, its row).
   */
  FORK_MAX_MESSAGES: integer(2_000, 1),
  /** Client events (any kind) one socket may send per minute; past it they are answered RATE_LIMITED, unrun. */
  SOCKET_EVENTS_PER_MINUTE: integer(120, 1),
  /**
   * How long a streaming message's deltas may wait to share one socket frame (the first goes out at once; every
   * other event of the thread waits for them). 0 sends one frame per delta.
   */
  SOCKET_DELTA_COALESCE_MS: integer(50, 0),
  /** Open socket connections per user, per server process; one more is refused at connect. */
  MAX_SOCKETS_PER_USER: integer(10, 1),
  TOOL_TIMEOUT_MS: integer(300_000, 100),
  TOOL_RESULT_INLINE_TOKENS: optionalInteger(50),
  TOOL_RESULT_MAX_CHARS: integer(2_000_000, 1000),
  WORKER_CONCURRENCY: integer(4, 1),
  /** BullMQ job lock; a killed worker's job is taken over after the lock expires and a stalled check runs. */
  WORKER_LOCK_MS: integer(30_000, 500),
  WORKER_STALLED_INTERVAL_MS: integer(30_000, 200),
  /** How often the sweeper derives pending folds and stranded turns from Postgres. */
  SWEEP_INTERVAL_MS: integer(60_000, 100),
  /**
   * A turn whose process died mid-answer (found by the sweeper once its lease expired): `retry` runs it again once,
   * its partial answer superseded; `fail` ends it with the error INTERRUPTED (the user may press Retry). A re-run cut
   * off too ends as `fail` does.
   */
  RESUME_INTERRUPTED_TURNS: z.enum(['retry', 'fail']).default('retry'),
  RATE_LIMIT_PER_MINUTE: integer(30, 1),
  /**
   * Tool rounds per user per minute, across processes: /v1 requests that only bring the results of the client tools
   * the last answer called (a coding agent makes dozens a minute); they spend this instead of RATE_LIMIT_PER_MINUTE.
   */
  TOOL_ROUNDS_PER_MINUTE: integer(240, 1),
  /**
   * Requests of any kind one user may make to /api per minute, in each process's memory (a coarse bound on every
   * route, under the narrower send, search and fork limits; nothing is spent in Redis for it).
   */
  API_REQUESTS_PER_MINUTE: integer(600, 1),
  /**
   * How long a client may take to send one whole request, headers and body (Node's requestTimeout): a body that
   * trickles in is cut off, with 408, after this.
   */
  REQUEST_TIMEOUT_MS: integer(30_000, 1000),
  /** Transcript searches (GET /api/search, GET /api/threads/:id/search) per user per minute, across processes. */
  SEARCH_PER_MINUTE: integer(60, 1),
  /** Exports (GET /api/threads/:id/export, GET /api/me/export) and erasures (DELETE /api/me) per user per minute, across processes. */
  EXPORTS_PER_MINUTE: integer(10, 1),
  /** Guest sessions per client address (IPv6 by /64) per minute, across processes. */
  GUEST_RATE_LIMIT_PER_MINUTE: integer(20, 1),
  /** Admin session sign-ins (POST /api/admin/session) per client address per minute. */
  ADMIN_SIGN_IN_LIMIT_PER_MINUTE: integer(10, 1),
  /** Failed admin or metrics credentials and runner callback signatures per client address per minute; past it 429. */
  AUTH_FAILURE_LIMIT_PER_MINUTE: integer(10, 1),
  SHUTDOWN_GRACE_MS: integer(10_000, 0),
  /** Bearer token of GET /metrics on the app port; default: ADMIN_TOKEN. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** When set, a second listener serves /metrics without auth on this port (workers, private scraping). */
  METRICS_PORT: optionalInteger(0),
  /** Address of the METRICS_PORT listener: loopback unless set (compose sets it for Prometheus on its network). */
  METRICS_HOST: z.string().trim().min(1).default('127.0.0.1'),

  /** MCP servers whose tools are offered to the model: inline JSON or a JSON file (see README "Tools from outside"). */
  MCP_SERVERS: optionalString,
  /** Tools run by external runners (signed webhooks): inline JSON or a JSON file. */
  EXTERNAL_TOOLS: optionalString,
  /** Cap of the tokens the offered MCP and external tool schemas take from the pack (the rest are not offered); default min(2000, budget / 4). */
  TOOL_SCHEMA_MAX_TOKENS: optionalInteger(0),
  /** HMAC-SHA256 secret of the external runners' requests and callbacks (required with EXTERNAL_TOOLS). */
  TOOL_WEBHOOK_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  /** The server's public base URL: external runners' callbackUrl is built from it (workers have no HTTP port). */
  PUBLIC_BASE_URL: z.url().optional(),

  /** Service keys of the OpenAI-compatible route (/v1), comma-separated, each at least 32 characters; unset: user tokens only. */
  OPENAI_FACADE_KEYS: z
    .string()
    .trim()
    .optional()
    .transform((value, context) => {
      const keys = commaList(value ?? '');
      if (keys.some((key) => key.length < 32)) {
        context.addIssue({ code: 'custom', message: 'each key must be at least 32 characters' });
        return z.NEVER;
      }
      return keys;
    }),
  /** More model names /v1/models lists and /v1/chat/completions accepts besides CHAT_MODEL, comma-separated. */
  FACADE_MODEL_ALIASES: z.string().trim().default('').transform(commaList),
  /**
   * Request headers naming a client's conversation on every /v1 route, first found wins (case-insensitive). Codex CLI
   * sends `session-id`, Claude Code `X-Claude-Code-Session-Id`; a body's `prompt_cache_key` is never one (applications reuse one key across conversations).
   */
  FACADE_THREAD_HEADERS: z
    .string()
    .trim()
    .default('X-Thread-Id,X-OpenWebUI-Chat-Id,session-id,X-Claude-Code-Session-Id')
    .transform((value, context) => {
      const names = commaList(value).map((name) => name.toLowerCase());
      if (names.length === 0 || names.some((name) => !/^[a-z0-9-]+$/.test(name))) {
        context.addIssue({ code: 'custom', message: 'expected comma-separated header names' });
        return z.NEVER;
      }
      return names;
    }),
  /**
   * Prompt prefixes marking a client's background requests (titles, tags, follow-up suggestions), answered statelessly:
   * comma-separated; `none` for none. Default: Open WebUI's task prompts (`### Task:`).
   */
  FACADE_AUXILIARY_PREFIXES: z
    .string()
    .trim()
    .default('### Task:')
    .transform((value) => (value.toLowerCase() === 'none' ? [] : commaList(value))),
  /** Largest request body of /v1/chat/completions (a client sends the whole history every time); past it 413. */
  FACADE_MAX_BODY_BYTES: integer(10 * 1024 * 1024, 1024),
  /**
   * Messages one /v1/chat/completions request reads at most to match its history with the conversation (over all its
   * branches); a history that needs more is refused (400). A request normally reads a handful, whatever its length.
   */
  FACADE_MAX_READ_MESSAGES: integer(200, 20),
  /**
   * Longest client instructions (the system and developer messages of a /v1 request, joined) a thread keeps; past it
   * 413. Codex CLI's developer messages are ~40 KB.
   */
  MAX_CLIENT_INSTRUCTIONS_CHARS: integer(128_000, 1000),
  /**
   * Longest description of one client tool a /v1 request may offer; past it 413. Claude Code 2.1's longest is 18,780
   * characters.
   */
  MAX_CLIENT_TOOL_DESCRIPTION_CHARS: integer(32_000, 1000),
  /**
   * `background: true` responses one user may start while this many of their answers are queued or running (any
   * kind counts); past it 429.
   */
  BACKGROUND_RESPONSES_PER_USER: integer(8, 1),
});

export type Env = z.infer<typeof schema> & {
  /** MCP_SERVERS and EXTERNAL_TOOLS, parsed, with `${NAME}` references resolved (those values are secrets). */
  toolSources: ToolSources;
};

/** A configuration error: its message is the one line printed before the process exits. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const variable = issue.path.join('.') || 'environment';
  return `${variable}: ${issue.message}`;
}

/** The models a deployment calls: the chat model and the summarizer (folds, condensing, titles). */
export function modelsInUse(env: Pick<z.infer<typeof schema>, 'CHAT_MODEL' | 'SUMMARY_MODEL'>): string[] {
  return [...new Set([env.CHAT_MODEL, env.SUMMARY_MODEL ?? env.CHAT_MODEL])];
}

/** Anthropic's cache entries live 5 minutes or 1 hour: PROMPT_CACHE_TTL in seconds → its `ttl`. */
const ANTHROPIC_CACHE_TTLS: Readonly<Record<number, '5m' | '1h'>> = { 300: '5m', 3600: '1h' };

/** The Anthropic `cache_control.ttl` of PROMPT_CACHE_TTL (validated at boot under CHAT_PROVIDER=anthropic). */
export function anthropicCacheTtl(promptCacheTtlSeconds: number): '5m' | '1h' {
  return ANTHROPIC_CACHE_TTLS[promptCacheTtlSeconds] ?? '5m';
}

type ProviderSettings = Pick<
  z.infer<typeof schema>,
  'CHAT_PROVIDER' | 'OPENAI_API_KEY' | 'OPENAI_BASE_URL' | 'ANTHROPIC_API_KEY' | 'ANTHROPIC_BASE_URL'
>;

/** The upstream of the chat and summarizer calls: CHAT_PROVIDER, else inferred (Anthropic when only its settings are set). */
export function chatProviderOf(env: ProviderSettings): 'openai' | 'anthropic' {
  if (env.CHAT_PROVIDER) return env.CHAT_PROVIDER;
  return (env.ANTHROPIC_API_KEY || env.ANTHROPIC_BASE_URL) && !env.OPENAI_API_KEY && !env.OPENAI_BASE_URL
    ? 'anthropic'
    : 'openai';
}

/** Whether the configured provider has an endpoint (else the offline model answers). */
export function hasModelEndpoint(env: ProviderSettings): boolean {
  return chatProviderOf(env) === 'anthropic'
    ? Boolean(env.ANTHROPIC_API_KEY || env.ANTHROPIC_BASE_URL)
    : Boolean(env.OPENAI_API_KEY || env.OPENAI_BASE_URL);
}

/** Both providers configured without CHAT_PROVIDER, or a PROMPT_CACHE_TTL Anthropic has no entry lifetime for. */
function chatProviderProblem(env: z.infer<typeof schema>): string | null {
  const anthropic = (['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL'] as const).filter((name) => env[name]);
  const openai = (['OPENAI_API_KEY', 'OPENAI_BASE_URL'] as const).filter((name) => env[name]);
  if (!env.CHAT_PROVIDER && anthropic.length > 0 && openai.length > 0)
    return `CHAT_PROVIDER: ${[...anthropic, ...openai].join(', ')} are all set; set CHAT_PROVIDER=openai or CHAT_PROVIDER=anthropic to say which the chat calls`;
  if (chatProviderOf(env) === 'anthropic' && hasModelEndpoint(env) && !ANTHROPIC_CACHE_TTLS[env.PROMPT_CACHE_TTL])
    return `PROMPT_CACHE_TTL: Anthropic keeps cache entries 5m or 1h; under CHAT_PROVIDER=anthropic set 5m or 1h (got ${env.PROMPT_CACHE_TTL} seconds)`;
  return null;
}

/** A money spend limit needs a price for every model in use: the variable and the model without one. */
function spendLimitProblem(env: z.infer<typeof schema>): string | null {
  for (const name of ['SPEND_LIMIT_USER', 'SPEND_LIMIT_GUEST', 'SPEND_LIMIT_GUESTS_PER_ADDRESS'] as const) {
    if (env[name]?.unit !== 'money') continue;
    const unpriced = modelsInUse(env).find((model) => !env.MODEL_PRICES[model]);
    if (unpriced)
      return `${name}: a money limit needs a price for every model in use, and MODEL_PRICES has none for "${unpriced}" (price it, or write the limit in tokens, e.g. 200000tokens/day)`;
  }
  return null;
}

/**
 * Parses and checks the environment. Throws ConfigError with one line naming the variable.
 * Production turns off development conveniences and requires real services and secrets.
 */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = schema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(issue ? describeIssue(issue) : 'invalid environment');
  }
  const env = parsed.data;
  if (env.NODE_ENV === 'production') {
    const problem = productionProblem(env);
    if (problem) throw new ConfigError(problem);
  }
  if (env.ALLOW_GUESTS === undefined) env.ALLOW_GUESTS = env.NODE_ENV !== 'production';
  if (env.OFFLINE_MODEL === undefined) env.OFFLINE_MODEL = env.NODE_ENV === 'production' ? 'refuse' : 'allow';
  const providerProblem = chatProviderProblem(env);
  if (providerProblem) throw new ConfigError(providerProblem);
  if (env.OFFLINE_MODEL === 'refuse' && !hasModelEndpoint(env)) {
    throw new ConfigError(
      'OPENAI_BASE_URL / OPENAI_API_KEY: no model endpoint configured; set one (or ANTHROPIC_API_KEY), or OFFLINE_MODEL=allow to serve the built-in offline demo model',
    );
  }
  for (const price of Object.values(env.MODEL_PRICES)) {
    // Cache writes are billed by the entries' lifetime: one price per deployment, the one PROMPT_CACHE_TTL selects.
    if (env.PROMPT_CACHE_TTL >= 3600) price.cacheWrite = price.cacheWrite1h;
  }
  // A limit nothing enforces (SPEND_LIMITS=off) needs no price; a malformed one was refused by the schema already.
  const spendProblem = env.SPEND_LIMITS === 'off' ? null : spendLimitProblem(env);
  if (spendProblem) throw new ConfigError(spendProblem);
  if (env.SPEND_LIMITS === undefined)
    env.SPEND_LIMITS =
      env.SPEND_LIMIT_USER || env.SPEND_LIMIT_GUEST || env.SPEND_LIMIT_GUESTS_PER_ADDRESS || env.SPEND_LIMIT_GROUP_CLAIM
        ? 'on'
        : 'off';
  let toolSources: ToolSources;
  try {
    toolSources = parseToolSources({
      ...(env.MCP_SERVERS ? { mcpServers: env.MCP_SERVERS } : {}),
      ...(env.EXTERNAL_TOOLS ? { externalTools: env.EXTERNAL_TOOLS } : {}),
      source: cleaned,
    });
  } catch (error) {
    throw new ConfigError(error instanceof Error ? error.message : String(error));
  }
  if (toolSources.externalTools.length > 0) {
    if (!env.TOOL_WEBHOOK_SECRET && toolSources.externalTools.some((tool) => !tool.secret)) {
      throw new ConfigError('TOOL_WEBHOOK_SECRET: required when EXTERNAL_TOOLS declares a tool without its own secret');
    }
    if (env.NODE_ENV === 'production') {
      for (const [index, tool] of toolSources.externalTools.entries()) {
        const problem =
          tool.secret === undefined ? null : webhookSecretProblem(`EXTERNAL_TOOLS: ${index}.secret`, tool.secret, env);
        if (problem) throw new ConfigError(problem);
      }
    }
    if (!env.PUBLIC_BASE_URL)
      throw new ConfigError("PUBLIC_BASE_URL: required when EXTERNAL_TOOLS declares tools (the runners' callbackUrl)");
  }
  return { ...env, toolSources };
}
