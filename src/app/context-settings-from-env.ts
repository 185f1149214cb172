import { readFileSync } from 'node:fs';
import {
  budgetOf,
  createTokenCounter,
  defaultRecallTokens,
  defaultUserMemoryTokens,
  defaultReservedOutputTokens,
  deriveContextDefaults,
  getModelProfile,
  parseKeepPolicy,
  parseTriggerPolicy,
  validatePolicies,
  type ModelProfile,
  type Result,
} from '../core/context';
import type { ContextSettings } from '../core/thread-context/context-settings';
import { ConfigError, hasModelEndpoint, type Env } from '../config/env';

export const DEFAULT_SYSTEM_PROMPT = [
  'You are a helpful assistant in a long-running chat.',
  'Earlier parts of the conversation may reach you as a summary that cites message numbers like [#12]; treat it as what was said.',
  'Answer in Markdown. Be accurate, and say so when you do not know.',
].join(' ');

function systemPrompt(env: Env): string {
  if (env.SYSTEM_PROMPT_FILE) {
    try {
      return readFileSync(env.SYSTEM_PROMPT_FILE, 'utf8').trim();
    } catch (error) {
      throw new ConfigError(
        `SYSTEM_PROMPT_FILE: cannot read ${env.SYSTEM_PROMPT_FILE} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }
  return env.SYSTEM_PROMPT ?? DEFAULT_SYSTEM_PROMPT;
}

/**
 * The window the offline model runs under when none is configured: small, so a newcomer sees the summary form
 * within about ten turns instead of after the 6,000 tokens a 128k model waits for. At 4,096 tokens the derived
 * trigger (1,536) takes some 18 turns of short offline replies; at 2,048 it is 768 tokens, about nine turns.
 */
export const OFFLINE_DEMO_WINDOW_TOKENS = 2048;

/** True when no endpoint is configured (the built-in offline model answers) and no window is set. */
export function usesOfflineDemoWindow(env: Env): boolean {
  return !hasModelEndpoint(env) && env.CONTEXT_MAX_INPUT_TOKENS === undefined;
}

function parsePolicy<T>(result: Result<T>): T {
  if (!result.ok) throw new ConfigError(result.error);
  return result.value;
}

/** The model profile with the configured window and reserve; a reserve that leaves no room is one line naming both. */
function profileFromEnv(env: Env): ModelProfile {
  const base = getModelProfile(env.CHAT_MODEL);
  const maxInputTokens =
    env.CONTEXT_MAX_INPUT_TOKENS ?? (usesOfflineDemoWindow(env) ? OFFLINE_DEMO_WINDOW_TOKENS : base.maxInputTokens);
  const reserved = env.RESERVED_OUTPUT_TOKENS;
  if (reserved !== undefined && reserved >= maxInputTokens) {
    const window =
      env.CONTEXT_MAX_INPUT_TOKENS === undefined
        ? `the ${maxInputTokens}-token window of ${env.CHAT_MODEL}`
        : `CONTEXT_MAX_INPUT_TOKENS=${maxInputTokens}`;
    throw new ConfigError(
      `RESERVED_OUTPUT_TOKENS=${reserved} must be below ${window}: unset it (the default is ` +
        `${defaultReservedOutputTokens({ maxInputTokens, maxOutputTokens: base.maxOutputTokens, reasoning: base.reasoning })} for this window) or raise CONTEXT_MAX_INPUT_TOKENS above ${reserved}`,
    );
  }
  return getModelProfile(env.CHAT_MODEL, {
    maxInputTokens,
    ...(reserved !== undefined ? { reservedOutputTokens: reserved } : {}),
  });
}

/**
 * Resolves the model profile, the policies and the system prefix. What is not set is derived from the window
 * (deriveContextDefaults: today's absolute defaults where the window allows them); an explicit combination that
 * cannot work stops the start with one line naming the variables and values that would work (ConfigError).
 */
export function contextSettingsFromEnv(env: Env): ContextSettings {
  const profile = profileFromEnv(env);
  const budget = budgetOf(profile);
  if (budget < 256) {
    throw new ConfigError(
      `CONTEXT_MAX_INPUT_TOKENS=${profile.maxInputTokens} leaves a budget of ${budget} tokens after ` +
        `RESERVED_OUTPUT_TOKENS=${profile.reservedOutputTokens}; at least 256 are needed: lower RESERVED_OUTPUT_TOKENS or raise CONTEXT_MAX_INPUT_TOKENS`,
    );
  }
  const defaults = deriveContextDefaults(profile, profile.reservedOutputTokens);
  const trigger = env.SUMMARY_TRIGGER
    ? parsePolicy(parseTriggerPolicy(env.SUMMARY_TRIGGER, 'SUMMARY_TRIGGER'))
    : defaults.trigger;
  const keep = env.SUMMARY_KEEP ? parsePolicy(parseKeepPolicy(env.SUMMARY_KEEP, 'SUMMARY_KEEP')) : defaults.keep;
  const validated = validatePolicies({
    trigger,
    keep,
    profile,
    summaryMaxTokens: env.SUMMARY_MAX_TOKENS ?? defaults.summaryMaxTokens,
    summarizerInputMaxTokens: env.SUMMARY_INPUT_MAX_TOKENS ?? defaults.summarizerInputMaxTokens,
    ...(env.SUMMARY_MODEL ? {} : { summarizerBudget: budget }),
  });
  if (!validated.ok) throw new ConfigError(validated.error);
  return {
    profile,
    budget,
    trigger: validated.value.trigger,
    keep: validated.value.keep,
    summaryMaxTokens: validated.value.summaryMaxTokens,
    summarizerInputMaxTokens: validated.value.summarizerInputMaxTokens,
    pinnedMaxTokens: env.PINNED_MAX_TOKENS ?? defaults.pinnedMaxTokens,
    toolResultInlineTokens: env.TOOL_RESULT_INLINE_TOKENS ?? defaults.toolResultInlineTokens,
    systemPrefix: systemPrompt(env),
    compat: env.CHAT_TEMPLATE_COMPAT,
    counter: createTokenCounter(profile.encoding),
    recallTokens: env.RECALL_TOKENS ?? defaultRecallTokens(budget),
    userMemoryTokens: env.USER_MEMORY_TOKENS ?? defaultUserMemoryTokens(budget),
    recallScope: env.RECALL_SCOPE,
    recallGate: env.RECALL_GATE === 'on',
    recallSticky: env.RECALL_STICKY === 'on',
    ...(env.RECALL_HELD_TOKENS !== undefined ? { recallHeldTokens: env.RECALL_HELD_TOKENS } : {}),
  };
}
