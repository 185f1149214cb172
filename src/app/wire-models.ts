import { anthropicCacheTtl, chatProviderOf, type Env } from '../config/env';
import {
  createEstimateCorrection,
  formatCondition,
  formatTriggerPolicy,
  getModelProfile,
  summarizerOutputTokens,
  type EstimateCorrection,
} from '../core/context';
import type { ContextSettings } from '../core/thread-context/context-settings';
import type { ChatModelPort, SummarizerPort } from '../core/ports';
import { createModelCallHistory } from '../db/model-call-history';
import { createChatModels } from '../llm/create-chat-model';
import { createChatPort, createSummarizerPort, sendsPromptCacheKey } from '../llm/model-ports';
import { withModelCallContext } from '../observability';
import type { TokenEstimateDto } from '../shared/admin-api';
import type { Wiring } from './application';
import { usesOfflineDemoWindow } from './context-settings-from-env';
import { credentialsOfUrl, withoutCredentials } from './logger';
import type { Stores } from './wire-stores';

/** The chat and summarizer models as the core calls them, what they are, and the stored calls' history. */
export interface Models {
  /** Provider, models and endpoint of the configured models. */
  label: ReturnType<typeof createChatModels>['label'];
  chat: ChatModelPort;
  summarizer: SummarizerPort;
  callHistory: ReturnType<typeof createModelCallHistory>;
  /** A fold continues the chat's prompt (FOLD_PROMPT=auto where it reaches the chat's cache). */
  foldsContinueChat: boolean;
}

/** Past this the estimate is considered broken, not corrected: 1.5 covers the tokenizers of common open models. */
const ESTIMATE_MAX_FACTOR = 1.5;

/** The chat model's token estimate as the admin page shows it. */
export function tokenEstimateOf(correction: EstimateCorrection | undefined): TokenEstimateDto {
  return {
    model: correction?.model ?? '',
    factor: correction?.factor ?? 1,
    maxFactor: ESTIMATE_MAX_FACTOR,
    observedRatio: correction?.observedRatio ?? null,
    samples: correction?.samples ?? 0,
  };
}

/** Step 2: the models, the estimate correction seeded from stored calls, and the settings logged. */
export async function wireModels(wiring: Wiring, { stores }: { stores: Stores }): Promise<Models> {
  const { env, log, tuning, settings } = wiring;
  const models = createChatModels(chatModelsOptions(env, settings));
  // The chat model's estimate correction, learned from reported usage (seeded from its stored calls below).
  settings.correction = createEstimateCorrection({ model: models.label.model, maxFactor: ESTIMATE_MAX_FACTOR });
  const callHistory = createModelCallHistory(stores.db);
  for (const call of await callHistory.recentPromptCounts({ model: models.label.model, limit: 50 }))
    settings.correction.observe(call.estimated, call.reported, call.ownerId ?? '');
  const promptCacheKey = sendsPromptCacheKey(env.PROMPT_CACHE_KEY, {
    provider: models.label.provider,
    baseUrl: env.OPENAI_BASE_URL,
  });
  const chat = withModelCallContext(
    tuning.chat ?? createChatPort(models.chat, models.label.model, { promptCacheKey }),
    log,
  );
  const summarizer = withModelCallContext(
    tuning.summarizer ?? createSummarizerPort(models.summarizer, models.label.summaryModel, { promptCacheKey }),
    log,
  );
  // A fold continues the chat's prompt only where it reaches the chat's cache: the same model on a real endpoint.
  const foldsContinueChat =
    env.FOLD_PROMPT === 'auto' &&
    models.label.provider !== 'offline' &&
    models.label.summaryModel === models.label.model;
  logModelSettings(wiring, models.label);
  return { label: models.label, chat, summarizer, callHistory, foldsContinueChat };
}

function chatModelsOptions(env: Env, settings: ContextSettings): Parameters<typeof createChatModels>[0] {
  return {
    provider: chatProviderOf(env),
    anthropic: {
      ...(env.ANTHROPIC_API_KEY ? { apiKey: env.ANTHROPIC_API_KEY } : {}),
      ...(env.ANTHROPIC_BASE_URL ? { baseUrl: env.ANTHROPIC_BASE_URL } : {}),
      cacheTtl: anthropicCacheTtl(env.PROMPT_CACHE_TTL),
      ...(env.ANTHROPIC_THINKING_BUDGET_TOKENS !== undefined
        ? { thinkingBudgetTokens: env.ANTHROPIC_THINKING_BUDGET_TOKENS }
        : {}),
    },
    ...(env.OPENAI_API_KEY ? { apiKey: env.OPENAI_API_KEY } : {}),
    ...(env.OPENAI_BASE_URL ? { baseUrl: env.OPENAI_BASE_URL } : {}),
    chatModel: env.CHAT_MODEL,
    ...(env.SUMMARY_MODEL ? { summaryModel: env.SUMMARY_MODEL } : {}),
    acceptsTemperature: settings.profile.acceptsTemperature,
    // Answers stop by tokens at the reserve the pack leaves free (reasoning models: reasoning included).
    chatMaxOutputTokens: settings.profile.reservedOutputTokens,
    chatReasoning: settings.profile.reasoning,
    // Summaries and condensed tool results stop by tokens too (a runaway summarizer otherwise runs to the timeout).
    ...summarizerCap(env, settings),
    timeoutMs: env.TURN_TIMEOUT_MS,
  };
}

/** The summarizer's output cap (`summarizerOutputTokens`), for the summary model's profile. */
function summarizerCap(
  env: Env,
  settings: ContextSettings,
): { summaryMaxOutputTokens: number; summaryReasoning: boolean } {
  const reasoning = env.SUMMARY_MODEL ? getModelProfile(env.SUMMARY_MODEL).reasoning : settings.profile.reasoning;
  const cap = summarizerOutputTokens({
    summaryMaxTokens: settings.summaryMaxTokens,
    toolResultInlineTokens: settings.toolResultInlineTokens,
    reasoning,
  });
  return { summaryMaxOutputTokens: cap, summaryReasoning: reasoning };
}

/** The model endpoint (never its credentials) and the context settings, once at start. */
function logModelSettings({ env, log, settings }: Wiring, label: Models['label']): void {
  if (label.provider === 'offline')
    log.warn('no OPENAI_API_KEY or OPENAI_BASE_URL: using the built-in OFFLINE model (deterministic demo replies)');
  else log.info({ model: label.model, baseUrl: withoutCredentials(label.baseUrl ?? '') }, 'model endpoint configured');
  if (credentialsOfUrl(env.OPENAI_BASE_URL).length > 0) {
    log.warn(
      'OPENAI_BASE_URL carries credentials: they are kept out of the logs, but requests cannot send credentials inside a URL; put the key in OPENAI_API_KEY',
    );
  }
  if (usesOfflineDemoWindow(env)) {
    log.info(
      `offline model: a ${settings.profile.maxInputTokens}-token demo window (set CONTEXT_MAX_INPUT_TOKENS to change it), so the summary forms within about ten turns`,
    );
  }
  log.info(
    {
      contextWindow: settings.profile.maxInputTokens,
      reservedOutputTokens: settings.profile.reservedOutputTokens,
      budget: settings.budget,
      trigger: formatTriggerPolicy(settings.trigger),
      keep: formatCondition(settings.keep),
      summaryMaxTokens: settings.summaryMaxTokens,
      summarizerInputMaxTokens: settings.summarizerInputMaxTokens,
      pinnedMaxTokens: settings.pinnedMaxTokens,
      toolResultInlineTokens: settings.toolResultInlineTokens,
    },
    'context settings',
  );
}
