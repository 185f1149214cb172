import { readFileSync } from 'node:fs';
import { budgetOf, createTokenCounter, defaultRecallTokens, getModelProfile, parseKeepPolicy, parseTriggerPolicy, validatePolicies } from '../core/context';
import type { ContextSettings } from '../core/context-settings';
import { ConfigError, type Env } from '../config/env';

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
      throw new ConfigError(`SYSTEM_PROMPT_FILE: cannot read ${env.SYSTEM_PROMPT_FILE} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  return env.SYSTEM_PROMPT ?? DEFAULT_SYSTEM_PROMPT;
}

/** Resolves the model profile, the policies and the system prefix; a bad value stops the start (ConfigError). */
export function contextSettingsFromEnv(env: Env): ContextSettings {
  const profile = getModelProfile(env.CHAT_MODEL, {
    ...(env.CONTEXT_MAX_INPUT_TOKENS ? { maxInputTokens: env.CONTEXT_MAX_INPUT_TOKENS } : {}),
    ...(env.RESERVED_OUTPUT_TOKENS ? { reservedOutputTokens: env.RESERVED_OUTPUT_TOKENS } : {}),
  });
  const trigger = parseTriggerPolicy(env.SUMMARY_TRIGGER, 'SUMMARY_TRIGGER');
  if (!trigger.ok) throw new ConfigError(trigger.error);
  const keep = parseKeepPolicy(env.SUMMARY_KEEP, 'SUMMARY_KEEP');
  if (!keep.ok) throw new ConfigError(keep.error);
  const validated = validatePolicies({
    trigger: trigger.value, keep: keep.value, profile,
    summaryMaxTokens: env.SUMMARY_MAX_TOKENS, summarizerInputMaxTokens: env.SUMMARY_INPUT_MAX_TOKENS,
  });
  if (!validated.ok) throw new ConfigError(validated.error);
  const budget = budgetOf(profile);
  if (budget < 256) throw new ConfigError(`CONTEXT_MAX_INPUT_TOKENS: leaves a budget of ${budget} tokens after the reserved output; at least 256 are needed`);
  return {
    profile,
    budget,
    trigger: validated.value.trigger,
    keep: validated.value.keep,
    summaryMaxTokens: validated.value.summaryMaxTokens,
    summarizerInputMaxTokens: validated.value.summarizerInputMaxTokens,
    systemPrefix: systemPrompt(env),
    compat: env.CHAT_TEMPLATE_COMPAT,
    counter: createTokenCounter(profile.encoding),
    recallTokens: env.RECALL_TOKENS ?? defaultRecallTokens(budget),
  };
}
