import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { anthropicCacheTtl, chatProviderOf, ConfigError, loadEnv } from './env';

const production = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgresql://chat:pw@db:5432/chat',
  REDIS_URL: 'redis://redis:6379',
  AUTH_SECRET: 'q0L8v2Zr7Xb1Nw5Ty3Mc9Ks4Hd6Jf0Pa2Ue8Gi1',
  ADMIN_TOKEN: 'Wm4Rk8Tz1Yq6Ls3Vn9Bx2Cd7Fh0Jp5Ga8Ej1Ho4',
  METRICS_TOKEN: 'Du7Ic2Ob5Ra9Sf3Tg6Vh0Wj4Xk8Yl1Zm5An2Bo7',
  OPENAI_API_KEY: 'sk-test-key',
};

function refusal(overrides: Record<string, string | undefined>): string {
  try {
    loadEnv({ ...production, ...overrides });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('loadEnv in production', () => {
  it('accepts real secrets and a model endpoint', () => {
    const env = loadEnv(production);
    expect(env).toMatchObject({
      NODE_ENV: 'production',
      ALLOW_GUESTS: false,
      OFFLINE_MODEL: 'refuse',
      METRICS_HOST: '127.0.0.1',
    });
  });

  it("names Codex CLI's session-id among the /v1 conversation headers and holds its ~40 KB instructions", () => {
    const env = loadEnv(production);
    expect(env.FACADE_THREAD_HEADERS).toEqual([
      'x-thread-id',
      'x-openwebui-chat-id',
      'session-id',
      'x-claude-code-session-id',
    ]);
    expect(env.MAX_CLIENT_INSTRUCTIONS_CHARS).toBe(128_000);
    expect(loadEnv({ ...production, MAX_CLIENT_INSTRUCTIONS_CHARS: '50000' }).MAX_CLIENT_INSTRUCTIONS_CHARS).toBe(
      50_000,
    );
  });

  it('requires each secret, naming it', () => {
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'AUTH_SECRET', 'ADMIN_TOKEN', 'METRICS_TOKEN']) {
      expect(refusal({ [name]: undefined })).toBe(`${name}: required when NODE_ENV=production`);
      expect(refusal({ [name]: '' })).toBe(`${name}: required when NODE_ENV=production`);
    }
  });

  it('refuses placeholders and values that are not random', () => {
    expect(refusal({ AUTH_SECRET: 'change-me-to-a-long-random-secret-of-32-chars' })).toMatch(
      /^AUTH_SECRET: a placeholder value is refused/,
    );
    expect(refusal({ ADMIN_TOKEN: 'change-me-admin-token-but-now-longer-than-32' })).toMatch(
      /^ADMIN_TOKEN: a placeholder/,
    );
    expect(refusal({ ADMIN_TOKEN: 'x'.repeat(40) })).toMatch(/^ADMIN_TOKEN: a placeholder/);
    expect(refusal({ METRICS_TOKEN: 'REPLACE_ME_metrics_token_value' })).toMatch(/^METRICS_TOKEN: a placeholder/);
    expect(refusal({ AUTH_SECRET: 'your-secret-here-0123456789-abcdefghij' })).toMatch(/^AUTH_SECRET: a placeholder/);
  });

  it('refuses an ADMIN_TOKEN under 32 characters and shared tokens', () => {
    expect(refusal({ ADMIN_TOKEN: 'Xk3u9Qm2Lp7Rw4Zt8Vb1Nc6' })).toBe(
      'ADMIN_TOKEN: must be at least 32 characters when NODE_ENV=production',
    );
    expect(refusal({ METRICS_TOKEN: production.ADMIN_TOKEN })).toMatch(/^METRICS_TOKEN: must differ from ADMIN_TOKEN/);
    expect(refusal({ ADMIN_TOKEN: production.AUTH_SECRET })).toMatch(/^AUTH_SECRET: must differ/);
  });

  it('refuses a TOOL_WEBHOOK_SECRET that is a placeholder, not random, or another secret, and a plain-http PUBLIC_BASE_URL', () => {
    const secret = 'Rt5Gy8Hu1Ji4Ko7Lp0Az3Sx6Dc9Fv2Bg5Nh8Mj1';
    expect(
      loadEnv({ ...production, TOOL_WEBHOOK_SECRET: secret, PUBLIC_BASE_URL: 'https://chat.example.com' })
        .TOOL_WEBHOOK_SECRET,
    ).toBe(secret);
    expect(refusal({ TOOL_WEBHOOK_SECRET: 'change-me-webhook-secret-of-32-characters' })).toMatch(
      /^TOOL_WEBHOOK_SECRET: a placeholder or non-random value is refused/,
    );
    expect(refusal({ TOOL_WEBHOOK_SECRET: 'abababababababababababababababab12' })).toMatch(
      /^TOOL_WEBHOOK_SECRET: a placeholder or non-random value/,
    );
    // Equal to AUTH_SECRET, a runner could sign any user's (or an admin's) token.
    for (const name of ['AUTH_SECRET', 'ADMIN_TOKEN', 'METRICS_TOKEN'] as const) {
      expect(refusal({ TOOL_WEBHOOK_SECRET: production[name] })).toMatch(
        /^TOOL_WEBHOOK_SECRET: must differ from AUTH_SECRET, ADMIN_TOKEN and METRICS_TOKEN/,
      );
    }
    expect(refusal({ TOOL_WEBHOOK_SECRET: secret, PUBLIC_BASE_URL: 'http://chat.example.com' })).toBe(
      'PUBLIC_BASE_URL: must be an https URL when NODE_ENV=production (runners post results and signatures to it)',
    );
    // Development keeps accepting plain http (a runner on localhost).
    expect(
      loadEnv({ TOOL_WEBHOOK_SECRET: 'w'.repeat(32), PUBLIC_BASE_URL: 'http://localhost:3000' }).PUBLIC_BASE_URL,
    ).toBe('http://localhost:3000');
  });

  it('refuses an OPENAI_FACADE_KEYS key that is a placeholder, not random, or another secret', () => {
    const key = 'Ke7Yw2Pq9Lm4Zx1Cv6Bn3Ma8Sd5Fg0Hj7Tr2Ue9';
    expect(loadEnv({ ...production, OPENAI_FACADE_KEYS: key }).OPENAI_FACADE_KEYS).toEqual([key]);
    expect(refusal({ OPENAI_FACADE_KEYS: `${key},sk-example-facade-key-for-the-docs-000` })).toMatch(
      /^OPENAI_FACADE_KEYS: key 2 is a placeholder or non-random value/,
    );
    expect(refusal({ OPENAI_FACADE_KEYS: 'abababababababababababababababab12' })).toMatch(
      /^OPENAI_FACADE_KEYS: key 1 is a placeholder or non-random value/,
    );
    // A service key equal to AUTH_SECRET could sign any user's (or an admin's) token; equal to a runner's secret,
    // a runner could act for every end user.
    for (const name of ['AUTH_SECRET', 'ADMIN_TOKEN', 'METRICS_TOKEN'] as const) {
      expect(refusal({ OPENAI_FACADE_KEYS: production[name] })).toMatch(
        /^OPENAI_FACADE_KEYS: key 1 must differ from AUTH_SECRET, ADMIN_TOKEN, METRICS_TOKEN, TOOL_WEBHOOK_SECRET/,
      );
    }
    expect(
      refusal({ OPENAI_FACADE_KEYS: key, TOOL_WEBHOOK_SECRET: key, PUBLIC_BASE_URL: 'https://c.example' }),
    ).toMatch(/^OPENAI_FACADE_KEYS: key 1 must differ/);
  });

  it('refuses the offline model unless OFFLINE_MODEL=allow', () => {
    const line =
      'OPENAI_BASE_URL / OPENAI_API_KEY: no model endpoint configured; set one (or ANTHROPIC_API_KEY), or OFFLINE_MODEL=allow to serve the built-in offline demo model';
    expect(refusal({ OPENAI_API_KEY: undefined })).toBe(line);
    expect(loadEnv({ ...production, OPENAI_API_KEY: undefined, OFFLINE_MODEL: 'allow' }).OFFLINE_MODEL).toBe('allow');
    expect(
      loadEnv({ ...production, OPENAI_API_KEY: undefined, OPENAI_BASE_URL: 'http://ollama:11434/v1' }).OPENAI_BASE_URL,
    ).toBe('http://ollama:11434/v1');
    expect(
      loadEnv({ ...production, OPENAI_API_KEY: undefined, ANTHROPIC_API_KEY: 'sk-ant-test' }).ANTHROPIC_API_KEY,
    ).toBe('sk-ant-test');
  });
});

describe('loadEnv: the chat provider', () => {
  it('infers Anthropic from its settings alone, OpenAI otherwise', () => {
    expect(chatProviderOf(loadEnv({ ANTHROPIC_API_KEY: 'sk-ant-test' }))).toBe('anthropic');
    expect(chatProviderOf(loadEnv({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/' }))).toBe('anthropic');
    expect(chatProviderOf(loadEnv({ OPENAI_API_KEY: 'sk-test' }))).toBe('openai');
    expect(chatProviderOf(loadEnv({}))).toBe('openai');
    expect(
      chatProviderOf(loadEnv({ CHAT_PROVIDER: 'anthropic', ANTHROPIC_API_KEY: 'sk-ant', OPENAI_API_KEY: 'sk-o' })),
    ).toBe('anthropic');
  });

  it('stops the start when both providers are configured without CHAT_PROVIDER, naming the variables', () => {
    expect(() => loadEnv({ ANTHROPIC_API_KEY: 'sk-ant', OPENAI_BASE_URL: 'http://ollama:11434/v1' })).toThrow(
      'CHAT_PROVIDER: ANTHROPIC_API_KEY, OPENAI_BASE_URL are all set; set CHAT_PROVIDER=openai or CHAT_PROVIDER=anthropic to say which the chat calls',
    );
    expect(() => loadEnv({ ANTHROPIC_BASE_URL: 'http://a.example/', OPENAI_API_KEY: 'sk-o' })).toThrow(
      /^CHAT_PROVIDER: ANTHROPIC_BASE_URL, OPENAI_API_KEY are all set/,
    );
    expect(loadEnv({ CHAT_PROVIDER: 'openai', ANTHROPIC_API_KEY: 'sk-ant', OPENAI_API_KEY: 'sk-o' })).toMatchObject({
      CHAT_PROVIDER: 'openai',
    });
  });

  it('accepts only 5m or 1h as PROMPT_CACHE_TTL under Anthropic, and maps them to its ttl', () => {
    expect(() => loadEnv({ ANTHROPIC_API_KEY: 'sk-ant', PROMPT_CACHE_TTL: '10m' })).toThrow(
      /^PROMPT_CACHE_TTL: Anthropic keeps cache entries 5m or 1h/,
    );
    expect(anthropicCacheTtl(loadEnv({ ANTHROPIC_API_KEY: 'sk-ant', PROMPT_CACHE_TTL: '1h' }).PROMPT_CACHE_TTL)).toBe(
      '1h',
    );
    expect(anthropicCacheTtl(loadEnv({ ANTHROPIC_API_KEY: 'sk-ant' }).PROMPT_CACHE_TTL)).toBe('5m');
    expect(loadEnv({ OPENAI_API_KEY: 'sk-o', PROMPT_CACHE_TTL: '10m' }).PROMPT_CACHE_TTL).toBe(600);
  });

  it('reads the thinking budget (off by default, at least 1,024)', () => {
    expect(loadEnv({}).ANTHROPIC_THINKING_BUDGET_TOKENS).toBeUndefined();
    expect(loadEnv({ ANTHROPIC_THINKING_BUDGET_TOKENS: '2048' }).ANTHROPIC_THINKING_BUDGET_TOKENS).toBe(2048);
    expect(() => loadEnv({ ANTHROPIC_THINKING_BUDGET_TOKENS: '100' })).toThrow(/^ANTHROPIC_THINKING_BUDGET_TOKENS:/);
  });

  it('prices cache writes at cacheWrite, by default 1.25x the input for 5m entries and 2x for 1h', () => {
    const prices = '{"claude-sonnet-4-5":{"input":3,"cachedInput":0.3,"output":15}}';
    expect(loadEnv({ MODEL_PRICES: prices }).MODEL_PRICES['claude-sonnet-4-5']?.cacheWrite).toBe(3.75);
    expect(
      loadEnv({ MODEL_PRICES: prices, PROMPT_CACHE_TTL: '1h' }).MODEL_PRICES['claude-sonnet-4-5']?.cacheWrite,
    ).toBe(6);
    const given = '{"m":{"input":1,"cacheWrite":1.5,"cacheWrite1h":2.5,"output":2}}';
    expect(loadEnv({ MODEL_PRICES: given }).MODEL_PRICES.m?.cacheWrite).toBe(1.5);
    expect(loadEnv({ MODEL_PRICES: given, PROMPT_CACHE_TTL: '1h' }).MODEL_PRICES.m?.cacheWrite).toBe(2.5);
  });
});

describe('loadEnv in development', () => {
  it('serves the offline model and keeps the metrics listener on loopback by default', () => {
    expect(loadEnv({})).toMatchObject({ OFFLINE_MODEL: 'allow', METRICS_HOST: '127.0.0.1', HOST: '0.0.0.0' });
    expect(() => loadEnv({ OFFLINE_MODEL: 'refuse' })).toThrow(/no model endpoint configured/);
  });

  it('reads guest token lifetimes as durations', () => {
    expect(loadEnv({})).toMatchObject({ GUEST_TOKEN_TTL: 30 * 86_400, GUEST_MAX_AGE: 90 * 86_400 });
    expect(loadEnv({ GUEST_TOKEN_TTL: '45s', GUEST_MAX_AGE: '12h' })).toMatchObject({
      GUEST_TOKEN_TTL: 45,
      GUEST_MAX_AGE: 12 * 3600,
    });
    expect(loadEnv({ GUEST_TOKEN_TTL: '600' }).GUEST_TOKEN_TTL).toBe(600);
    expect(() => loadEnv({ GUEST_MAX_AGE: 'ninety days' })).toThrow(/^GUEST_MAX_AGE: expected a duration/);
    expect(() => loadEnv({ GUEST_TOKEN_TTL: '0s' })).toThrow(/^GUEST_TOKEN_TTL: expected a duration/);
  });
});

describe('FACADE_AUXILIARY_PREFIXES', () => {
  it("defaults to Open WebUI's task prompts, reads a comma-separated list, and none turns it off", () => {
    expect(loadEnv({}).FACADE_AUXILIARY_PREFIXES).toEqual(['### Task:']);
    expect(loadEnv({ FACADE_AUXILIARY_PREFIXES: '### Task:, Write a title:' }).FACADE_AUXILIARY_PREFIXES).toEqual([
      '### Task:',
      'Write a title:',
    ]);
    expect(loadEnv({ FACADE_AUXILIARY_PREFIXES: 'none' }).FACADE_AUXILIARY_PREFIXES).toEqual([]);
  });
});

describe('PROMPT_CACHE_TTL and IDLE_FOLD_MIN_TOKENS', () => {
  it('default to five minutes and a derived minimum, and take durations', () => {
    expect(loadEnv(production).PROMPT_CACHE_TTL).toBe(300);
    expect(loadEnv(production).IDLE_FOLD_MIN_TOKENS).toBeUndefined();
    expect(loadEnv({ ...production, PROMPT_CACHE_TTL: '1h', IDLE_FOLD_MIN_TOKENS: '3000' })).toMatchObject({
      PROMPT_CACHE_TTL: 3600,
      IDLE_FOLD_MIN_TOKENS: 3000,
    });
    expect(refusal({ PROMPT_CACHE_TTL: 'soon' })).toMatch(/^PROMPT_CACHE_TTL: expected a duration/);
    expect(refusal({ IDLE_FOLD_MIN_TOKENS: '0' })).toMatch(/^IDLE_FOLD_MIN_TOKENS/);
  });
});

describe('MODEL_PRICES', () => {
  it('reads prices per million tokens by model, the cached price defaulting to the input price; none by default', () => {
    expect(loadEnv(production).MODEL_PRICES).toEqual({});
    const env = loadEnv({
      ...production,
      MODEL_PRICES: '{"gpt-4o-mini":{"input":0.15,"cachedInput":0.075,"output":0.6},"local":{"input":0,"output":0}}',
    });
    expect(env.MODEL_PRICES).toEqual({
      'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, cacheWrite: 0.1875, cacheWrite1h: 0.3, output: 0.6 },
      local: { input: 0, cachedInput: 0, cacheWrite: 0, cacheWrite1h: 0, output: 0 },
    });
  });

  it('refuses what is not JSON, a negative price or an unknown field, naming the variable', () => {
    expect(refusal({ MODEL_PRICES: 'gpt-4o: cheap' })).toMatch(/^MODEL_PRICES: expected JSON/);
    expect(refusal({ MODEL_PRICES: '{"gpt-4o":{"input":-1,"output":1}}' })).toMatch(/^MODEL_PRICES: gpt-4o\.input: /);
    expect(refusal({ MODEL_PRICES: '{"gpt-4o":{"input":1,"output":1,"cached":0.5}}' })).toMatch(
      /^MODEL_PRICES: gpt-4o/,
    );
  });
});

describe('spend limits', () => {
  const prices = '{"gpt-4o-mini":{"input":0.15,"output":0.6},"small":{"input":0.05,"output":0.2}}';

  it('are off and unset by default, read AMOUNT/PERIOD, and turn enforcement on when a default is set', () => {
    const unset = loadEnv(production);
    expect([unset.SPEND_LIMIT_USER, unset.SPEND_LIMIT_GUEST, unset.SPEND_LIMITS]).toEqual([
      undefined,
      undefined,
      'off',
    ]);
    expect(unset.SPEND_LIMIT_TIMEZONE).toBe('UTC');
    const env = loadEnv({
      ...production,
      MODEL_PRICES: prices,
      SPEND_LIMIT_USER: '0.50/day',
      SPEND_LIMIT_GUEST: '20000tokens/week',
      SPEND_LIMIT_GUESTS_PER_ADDRESS: '2/month',
      SPEND_LIMIT_TIMEZONE: 'Europe/Paris',
    });
    expect(env.SPEND_LIMIT_USER).toEqual({ amount: 0.5, unit: 'money', period: 'day' });
    expect(env.SPEND_LIMIT_GUEST).toEqual({ amount: 20_000, unit: 'tokens', period: 'week' });
    expect(env.SPEND_LIMIT_GUESTS_PER_ADDRESS).toEqual({ amount: 2, unit: 'money', period: 'month' });
    expect(env.SPEND_LIMITS).toBe('on');
    expect(loadEnv({ ...production, SPEND_LIMITS: 'on' }).SPEND_LIMITS).toBe('on');
    expect(loadEnv({ ...production, SPEND_LIMIT_GUEST: '100tokens/day', SPEND_LIMITS: 'off' }).SPEND_LIMITS).toBe(
      'off',
    );
  });

  it('refuses a malformed limit or time zone, naming the variable', () => {
    expect(refusal({ SPEND_LIMIT_USER: '0.50' })).toMatch(/^SPEND_LIMIT_USER: expected AMOUNT\/PERIOD/);
    expect(refusal({ SPEND_LIMIT_GUEST: '5/year' })).toMatch(/^SPEND_LIMIT_GUEST: expected AMOUNT\/PERIOD/);
    expect(refusal({ SPEND_LIMIT_GUESTS_PER_ADDRESS: '1.5tokens/day' })).toMatch(/^SPEND_LIMIT_GUESTS_PER_ADDRESS: /);
    expect(refusal({ SPEND_LIMIT_TIMEZONE: 'Mars/Olympus' })).toMatch(/^SPEND_LIMIT_TIMEZONE: an IANA time zone/);
    expect(refusal({ SPEND_LIMIT_GROUP_CLAIM: 'sub' })).toMatch(/^SPEND_LIMIT_GROUP_CLAIM: a claim name/);
    expect(refusal({ SPEND_LIMIT_GROUP_CLAIM: 'my groups' })).toMatch(/^SPEND_LIMIT_GROUP_CLAIM: a claim name/);
    const claimed = loadEnv({ ...production, SPEND_LIMIT_GROUP_CLAIM: 'https://example.com/groups' });
    expect([claimed.SPEND_LIMIT_GROUP_CLAIM, claimed.SPEND_LIMITS]).toEqual(['https://example.com/groups', 'on']);
  });

  it('refuses a money limit while a model in use, the summarizer included, has no price, naming both', () => {
    expect(refusal({ SPEND_LIMIT_USER: '1/day' })).toMatch(/^SPEND_LIMIT_USER: .*"gpt-4o-mini"/);
    expect(refusal({ MODEL_PRICES: prices, SUMMARY_MODEL: 'unpriced-summarizer', SPEND_LIMIT_GUEST: '1/day' })).toMatch(
      /^SPEND_LIMIT_GUEST: .*"unpriced-summarizer"/,
    );
    // Off, a limit needs no price (nothing enforces it).
    expect(loadEnv({ ...production, SPEND_LIMIT_USER: '1/day', SPEND_LIMITS: 'off' }).SPEND_LIMITS).toBe('off');
    // Token limits need no price; a priced summarizer is fine.
    expect(loadEnv({ ...production, SPEND_LIMIT_USER: '1000tokens/day' }).SPEND_LIMIT_USER?.unit).toBe('tokens');
    expect(
      loadEnv({ ...production, MODEL_PRICES: prices, SUMMARY_MODEL: 'small', SPEND_LIMIT_USER: '1/day' }).SPEND_LIMITS,
    ).toBe('on');
  });
});

describe('FORK_MAX_MESSAGES', () => {
  it("bounds one user's copied rows by default as README says: MAX_THREADS_PER_USER forks of FORK_MAX_MESSAGES each", async () => {
    const env = loadEnv({});
    const worstCase = env.MAX_THREADS_PER_USER * env.FORK_MAX_MESSAGES;
    expect(worstCase).toBeLessThanOrEqual(2_000_000);
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(`| \`FORK_MAX_MESSAGES\` | \`${env.FORK_MAX_MESSAGES}\` |`);
    expect(readme).toContain(`${worstCase.toLocaleString('en-US')} messages`);
  });
});
