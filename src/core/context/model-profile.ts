import type { EncodingName } from './types';

/** What the engine needs to know about a chat model. */
export interface ModelProfile {
  name: string;
  encoding: EncodingName;
  /** Largest prompt the model accepts (for models whose window includes output, the whole window). */
  maxInputTokens: number;
  maxOutputTokens: number;
  /** Held back from the prompt for the reply. Default: min(maxOutputTokens, 4096, a quarter of maxInputTokens). */
  reservedOutputTokens: number;
  /** Reasoning models (o-series, gpt-5) reject `temperature`. */
  acceptsTemperature: boolean;
  /**
   * Reasoning models (o-series, gpt-5) spend hidden reasoning tokens from the output cap, which they take as
   * `max_completion_tokens`: their default reserve is larger, so an answer still fits after the reasoning.
   */
  reasoning: boolean;
}

/** Config overrides (`CONTEXT_MAX_INPUT_TOKENS`, `RESERVED_OUTPUT_TOKENS`). */
export interface ModelProfileOverrides {
  maxInputTokens?: number;
  reservedOutputTokens?: number;
}

type ProfileRow = Omit<ModelProfile, 'name' | 'reservedOutputTokens'>;

/** Cap of the default output reservation. */
export const DEFAULT_RESERVED_OUTPUT_CAP = 4096;
/**
 * Cap of a reasoning model's default reservation: reasoning and answer share it (OpenAI suggests leaving some 25,000
 * tokens for both when starting with reasoning models), so 4,096 could all go to reasoning and end with no answer.
 */
export const REASONING_RESERVED_OUTPUT_CAP = 25_000;

/**
 * The output cap of summarizer calls (folds, their retries and condensing, tool-result condensing): twice the longer
 * of the summary cap and the inline tool-result size, so an over-long summary can still be condensed by the next step
 * while a runaway one stops by tokens; a reasoning summary model gets REASONING_RESERVED_OUTPUT_CAP more for its
 * hidden reasoning.
 */
export function summarizerOutputTokens(options: {
  summaryMaxTokens: number;
  toolResultInlineTokens: number;
  reasoning: boolean;
}): number {
  const answer = 2 * Math.max(options.summaryMaxTokens, options.toolResultInlineTokens);
  return answer + (options.reasoning ? REASONING_RESERVED_OUTPUT_CAP : 0);
}

/** The model's window: what every derived default is a function of. */
export interface ContextWindow {
  /** `CONTEXT_MAX_INPUT_TOKENS`, or the model profile's. */
  maxInputTokens: number;
  /** The model profile's largest answer. */
  maxOutputTokens: number;
  /** A reasoning model (its reserve holds the hidden reasoning too). */
  reasoning?: boolean;
}

/**
 * The default output reserve of a window: min(max output, 4096, a quarter of the window); 25,000 instead of 4,096
 * for reasoning models. The quarter only binds below 16k windows (a 4k Ollama model keeps 1,024 tokens for its
 * answer and 3,072 for the prompt) and below 100k for reasoning models.
 */
export function defaultReservedOutputTokens(window: ContextWindow): number {
  const cap = window.reasoning ? REASONING_RESERVED_OUTPUT_CAP : DEFAULT_RESERVED_OUTPUT_CAP;
  return Math.max(1, Math.min(window.maxOutputTokens, cap, Math.floor(window.maxInputTokens / 4)));
}

/** Used for names not in the table: the newest encoding and a conservative 128k window. */
export const UNKNOWN_MODEL_PROFILE: ProfileRow = {
  encoding: 'o200k_base',
  maxInputTokens: 128_000,
  maxOutputTokens: 4096,
  acceptsTemperature: true,
  reasoning: false,
};

// Keyed by name prefix; the longest matching prefix wins (`gpt-4o-mini` before `gpt-4o`, `gpt-4-turbo` before `gpt-4`).
// gpt-5 advertises 400k total but accepts at most 272k input; the others' window is shared by input and output.
const PROFILE_TABLE: Record<string, ProfileRow> = {
  'gpt-5': {
    encoding: 'o200k_base',
    maxInputTokens: 272_000,
    maxOutputTokens: 128_000,
    acceptsTemperature: false,
    reasoning: true,
  },
  'gpt-4.1': {
    encoding: 'o200k_base',
    maxInputTokens: 1_047_576,
    maxOutputTokens: 32_768,
    acceptsTemperature: true,
    reasoning: false,
  },
  'gpt-4o': {
    encoding: 'o200k_base',
    maxInputTokens: 128_000,
    maxOutputTokens: 16_384,
    acceptsTemperature: true,
    reasoning: false,
  },
  'gpt-4o-mini': {
    encoding: 'o200k_base',
    maxInputTokens: 128_000,
    maxOutputTokens: 16_384,
    acceptsTemperature: true,
    reasoning: false,
  },
  o1: {
    encoding: 'o200k_base',
    maxInputTokens: 200_000,
    maxOutputTokens: 100_000,
    acceptsTemperature: false,
    reasoning: true,
  },
  'o1-mini': {
    encoding: 'o200k_base',
    maxInputTokens: 128_000,
    maxOutputTokens: 65_536,
    acceptsTemperature: false,
    reasoning: true,
  },
  o3: {
    encoding: 'o200k_base',
    maxInputTokens: 200_000,
    maxOutputTokens: 100_000,
    acceptsTemperature: false,
    reasoning: true,
  },
  'o4-mini': {
    encoding: 'o200k_base',
    maxInputTokens: 200_000,
    maxOutputTokens: 100_000,
    acceptsTemperature: false,
    reasoning: true,
  },
  'gpt-4': {
    encoding: 'cl100k_base',
    maxInputTokens: 8192,
    maxOutputTokens: 8192,
    acceptsTemperature: true,
    reasoning: false,
  },
  'gpt-4-32k': {
    encoding: 'cl100k_base',
    maxInputTokens: 32_768,
    maxOutputTokens: 8192,
    acceptsTemperature: true,
    reasoning: false,
  },
  'gpt-4-turbo': {
    encoding: 'cl100k_base',
    maxInputTokens: 128_000,
    maxOutputTokens: 4096,
    acceptsTemperature: true,
    reasoning: false,
  },
  'gpt-4-1106': {
    encoding: 'cl100k_base',
    maxInputTokens: 128_000,
    maxOutputTokens: 4096,
    acceptsTemperature: true,
    reasoning: false,
  },
  'gpt-4-0125': {
    encoding: 'cl100k_base',
    maxInputTokens: 128_000,
    maxOutputTokens: 4096,
    acceptsTemperature: true,
    reasoning: false,
  },
  // Claude: a 200k window; Anthropic's tokenizer is not public, so the estimate counts with o200k_base and the
  // per-model correction (calibrated from reported usage) scales it.
  'claude-opus-4': {
    encoding: 'o200k_base',
    maxInputTokens: 200_000,
    maxOutputTokens: 32_000,
    acceptsTemperature: true,
    reasoning: false,
  },
  'claude-opus-4-5': {
    encoding: 'o200k_base',
    maxInputTokens: 200_000,
    maxOutputTokens: 64_000,
    acceptsTemperature: true,
    reasoning: false,
  },
  'claude-sonnet-4': {
    encoding: 'o200k_base',
    maxInputTokens: 200_000,
    maxOutputTokens: 64_000,
    acceptsTemperature: true,
    reasoning: false,
  },
  'claude-haiku-4': {
    encoding: 'o200k_base',
    maxInputTokens: 200_000,
    maxOutputTokens: 64_000,
    acceptsTemperature: true,
    reasoning: false,
  },
  'claude-3-7-sonnet': {
    encoding: 'o200k_base',
    maxInputTokens: 200_000,
    maxOutputTokens: 64_000,
    acceptsTemperature: true,
    reasoning: false,
  },
  'claude-3-5': {
    encoding: 'o200k_base',
    maxInputTokens: 200_000,
    maxOutputTokens: 8192,
    acceptsTemperature: true,
    reasoning: false,
  },
  'gpt-3.5-turbo': {
    encoding: 'cl100k_base',
    maxInputTokens: 16_385,
    maxOutputTokens: 4096,
    acceptsTemperature: true,
    reasoning: false,
  },
};

const PREFIXES_LONGEST_FIRST = Object.keys(PROFILE_TABLE).sort((a, b) => b.length - a.length);

function findRow(modelName: string): ProfileRow {
  // Accept provider-qualified names such as `openai/gpt-4o`.
  const bare = modelName.trim().toLowerCase().split('/').pop() ?? '';
  for (const prefix of PREFIXES_LONGEST_FIRST) {
    // A prefix matches the whole name or a name continuing with `-` or `.` (`gpt-4o-2024-08-06`, `gpt-5.1`),
    // so `o1` does not match `o10` and `gpt-4` does not match `gpt-4o`.
    if (bare === prefix || bare.startsWith(`${prefix}-`) || bare.startsWith(`${prefix}.`)) {
      const row = PROFILE_TABLE[prefix];
      if (row) return row;
    }
  }
  return UNKNOWN_MODEL_PROFILE;
}

function assertPositiveInteger(name: string, value: number): void {
  if (!Number.isInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer, got ${value}`);
}

/**
 * The profile of a chat model by name (dated and provider-qualified names resolve to their family).
 * Unknown names get o200k_base and a 128k window. Throws a RangeError on overrides that leave no prompt budget.
 */
export function getModelProfile(modelName: string, overrides: ModelProfileOverrides = {}): ModelProfile {
  const row = findRow(modelName);
  const maxInputTokens = overrides.maxInputTokens ?? row.maxInputTokens;
  const reservedOutputTokens =
    overrides.reservedOutputTokens ??
    defaultReservedOutputTokens({ maxInputTokens, maxOutputTokens: row.maxOutputTokens, reasoning: row.reasoning });
  assertPositiveInteger('maxInputTokens', maxInputTokens);
  assertPositiveInteger('reservedOutputTokens', reservedOutputTokens);
  if (reservedOutputTokens >= maxInputTokens) {
    throw new RangeError(
      `reservedOutputTokens (${reservedOutputTokens}) must be below maxInputTokens (${maxInputTokens})`,
    );
  }
  return { name: modelName, ...row, maxInputTokens, reservedOutputTokens };
}

/** Tokens a context pack may use: max input minus the reserved output. */
export function budgetOf(profile: ModelProfile): number {
  return profile.maxInputTokens - profile.reservedOutputTokens;
}
