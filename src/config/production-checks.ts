/** What production checks read of the parsed environment (structural, so this file does not import env.ts). */
export interface ProductionSecrets {
  DATABASE_URL?: string | undefined;
  REDIS_URL?: string | undefined;
  AUTH_SECRET?: string | undefined;
  ADMIN_TOKEN?: string | undefined;
  METRICS_TOKEN?: string | undefined;
  TOOL_WEBHOOK_SECRET?: string | undefined;
  PUBLIC_BASE_URL?: string | undefined;
  OPENAI_FACADE_KEYS?: readonly string[] | undefined;
}

/** Shortest ADMIN_TOKEN production accepts (development accepts 16). */
export const PRODUCTION_ADMIN_TOKEN_MIN = 32;

/**
 * Values published in this repository or its history (docker-compose fallbacks, examples): anyone can read them,
 * so a deployment that kept one lets anybody sign tokens or call the admin API.
 */
const KNOWN_PLACEHOLDERS = new Set(['change-me-to-a-long-random-secret-of-32-chars', 'change-me-admin-token']);

/** Words that mark a value as an example rather than a secret. */
const PLACEHOLDER_WORDS =
  /change[-_ ]?me|replace[-_ ]?me|placeholder|your[-_ ]?(secret|token)|example|insecure|not[-_ ]?secret/i;

/** Fewest distinct characters a signing secret may have in production (48 random base64 bytes have ~40). */
export const PRODUCTION_SECRET_MIN_DISTINCT = 10;

/** Whether a secret is a known placeholder or obviously not random (one repeated character). */
export function isPlaceholderSecret(value: string): boolean {
  if (KNOWN_PLACEHOLDERS.has(value.trim())) return true;
  if (PLACEHOLDER_WORDS.test(value)) return true;
  return new Set(value).size <= 2;
}

/**
 * The first reason this environment must not run in production, as one line naming the variable, or null.
 * Production requires real services and real secrets: no placeholders, an admin token of at least 32 characters,
 * and a metrics token of its own (a scraper's token must not open the admin API); with external runners, a webhook
 * secret of their own and an https PUBLIC_BASE_URL.
 */
export function productionProblem(env: ProductionSecrets): string | null {
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'AUTH_SECRET', 'ADMIN_TOKEN', 'METRICS_TOKEN'] as const) {
    if (!env[name]) return `${name}: required when NODE_ENV=production`;
  }
  for (const name of ['AUTH_SECRET', 'ADMIN_TOKEN', 'METRICS_TOKEN'] as const) {
    if (isPlaceholderSecret(env[name] ?? ''))
      return `${name}: a placeholder value is refused when NODE_ENV=production; generate one, e.g. \`openssl rand -base64 48\``;
  }
  if ((env.ADMIN_TOKEN ?? '').length < PRODUCTION_ADMIN_TOKEN_MIN) {
    return `ADMIN_TOKEN: must be at least ${PRODUCTION_ADMIN_TOKEN_MIN} characters when NODE_ENV=production`;
  }
  if (env.METRICS_TOKEN === env.ADMIN_TOKEN)
    return 'METRICS_TOKEN: must differ from ADMIN_TOKEN when NODE_ENV=production (a scraper must not hold the admin token)';
  if (env.METRICS_TOKEN === env.AUTH_SECRET || env.ADMIN_TOKEN === env.AUTH_SECRET) {
    return 'AUTH_SECRET: must differ from ADMIN_TOKEN and METRICS_TOKEN when NODE_ENV=production';
  }
  return toolCallbackProblem(env) ?? facadeKeysProblem(env);
}

/**
 * Why a /v1 service key (OPENAI_FACADE_KEYS) is refused in production: a placeholder, not random, or equal to another
 * secret (AUTH_SECRET would let its holder sign any token; a runner's secret would let a runner act for every end user).
 */
function facadeKeysProblem(env: ProductionSecrets): string | null {
  const others = [env.AUTH_SECRET, env.ADMIN_TOKEN, env.METRICS_TOKEN, env.TOOL_WEBHOOK_SECRET];
  for (const [index, key] of (env.OPENAI_FACADE_KEYS ?? []).entries()) {
    if (isPlaceholderSecret(key) || new Set(key).size < PRODUCTION_SECRET_MIN_DISTINCT)
      return `OPENAI_FACADE_KEYS: key ${index + 1} is a placeholder or non-random value, refused when NODE_ENV=production; generate one, e.g. \`openssl rand -base64 48\``;
    if (others.includes(key))
      return `OPENAI_FACADE_KEYS: key ${index + 1} must differ from AUTH_SECRET, ADMIN_TOKEN, METRICS_TOKEN, TOOL_WEBHOOK_SECRET when NODE_ENV=production`;
  }
  return null;
}

/**
 * Why a runner's signing secret (`name`: TOOL_WEBHOOK_SECRET or a runner's own `secret`) is refused in production:
 * a placeholder, not random, or equal to AUTH_SECRET, ADMIN_TOKEN or METRICS_TOKEN. Null when it is fine.
 */
export function webhookSecretProblem(name: string, secret: string, env: ProductionSecrets): string | null {
  if (isPlaceholderSecret(secret) || new Set(secret).size < PRODUCTION_SECRET_MIN_DISTINCT) {
    return `${name}: a placeholder or non-random value is refused when NODE_ENV=production; generate one, e.g. \`openssl rand -base64 48\``;
  }
  if (secret === env.AUTH_SECRET || secret === env.ADMIN_TOKEN || secret === env.METRICS_TOKEN) {
    return `${name}: must differ from AUTH_SECRET, ADMIN_TOKEN and METRICS_TOKEN when NODE_ENV=production (a runner must not be able to sign user or admin tokens)`;
  }
  return null;
}

/**
 * The external-runner settings production refuses: a TOOL_WEBHOOK_SECRET that is a placeholder, not random, or the
 * same as another secret (equal to AUTH_SECRET, every runner could mint admin tokens), and a PUBLIC_BASE_URL that
 * is not https (the runners' callbacks carry results and signatures).
 */
function toolCallbackProblem(env: ProductionSecrets): string | null {
  const problem =
    env.TOOL_WEBHOOK_SECRET === undefined
      ? null
      : webhookSecretProblem('TOOL_WEBHOOK_SECRET', env.TOOL_WEBHOOK_SECRET, env);
  if (problem) return problem;
  if (env.PUBLIC_BASE_URL !== undefined && !/^https:\/\//i.test(env.PUBLIC_BASE_URL)) {
    return 'PUBLIC_BASE_URL: must be an https URL when NODE_ENV=production (runners post results and signatures to it)';
  }
  return null;
}
