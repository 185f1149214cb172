/**
 * A per-model correction of our prompt-token estimate, learned from the prompt tokens providers report.
 *
 * Our counter follows OpenAI's published rules; another tokenizer (a Llama or Qwen model behind vLLM or Ollama)
 * may count the same prompt higher. Each chat call with a usage report feeds reported ÷ estimated into an
 * exponentially weighted mean. The `factor` applied to estimates is that mean clamped to [1, maxFactor]: it may
 * only make the estimate larger, so the budget guard is never loosened by a provider that counts lower (or by a
 * bogus report), and one odd report moves it only by `weight` of the way.
 *
 * The factor is shared by every user of the chat model, so no one user may set it: each source (the user a report
 * comes from) keeps its own mean, and the ratio used is the median of the means of the latest `maxSources` sources.
 * One user's heavily tokenizing text (emoji, rare scripts) counts once, however many calls they make.
 */
export interface EstimateCorrection {
  /** The model the reports come from. */
  readonly model: string;
  /** Multiplier of every prompt estimate (budget guard, trigger): >= 1. */
  readonly factor: number;
  /** Reported ÷ estimated as observed (unclamped mean); null before the first report. */
  readonly observedRatio: number | null;
  /** Reports taken into account. */
  readonly samples: number;
  /**
   * One chat call's estimate and the provider's count of the same prompt, from `source` (the thread's owner; one
   * shared source when absent). Small or empty prompts are ignored.
   */
  observe(estimatedPromptTokens: number, reportedPromptTokens: number, source?: string): void;
}

export interface EstimateCorrectionOptions {
  model: string;
  /** Highest factor; past it the estimate is considered broken rather than corrected (default 1.5). */
  maxFactor?: number;
  /** Weight of the newest report in the mean (default 0.2). */
  weight?: number;
  /** Prompts under this many estimated tokens say little about a tokenizer (default 64). */
  minPromptTokens?: number;
  /** Sources whose means are kept (the most recently heard); the median is over them (default 63). */
  maxSources?: number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function createEstimateCorrection(options: EstimateCorrectionOptions): EstimateCorrection {
  const maxFactor = options.maxFactor ?? 1.5;
  const weight = options.weight ?? 0.2;
  const minPromptTokens = options.minPromptTokens ?? 64;
  const maxSources = options.maxSources ?? 63;
  // Insertion order is recency: a source heard again moves to the end; the oldest is dropped past maxSources.
  const means = new Map<string, number>();
  let ratio: number | null = null;
  let samples = 0;
  return {
    model: options.model,
    get factor() {
      return ratio === null ? 1 : Math.min(maxFactor, Math.max(1, ratio));
    },
    get observedRatio() {
      return ratio;
    },
    get samples() {
      return samples;
    },
    observe(estimated, reported, source = '') {
      if (!Number.isFinite(estimated) || !Number.isFinite(reported) || estimated < minPromptTokens || reported <= 0)
        return;
      const next = reported / estimated;
      const previous = means.get(source);
      means.delete(source);
      means.set(source, previous === undefined ? next : previous + weight * (next - previous));
      if (means.size > maxSources) means.delete(means.keys().next().value as string);
      ratio = median([...means.values()]);
      samples += 1;
    },
  };
}

/** The budget an estimate must stay within so that estimate × factor stays within `budget`. */
export function correctedBudget(budget: number, factor: number): number {
  return factor <= 1 ? budget : Math.floor(budget / factor);
}
