/**
 * A per-model correction of our prompt-token estimate, learned from the prompt tokens providers report.
 *
 * Our counter follows OpenAI's published rules; another tokenizer (a Llama or Qwen model behind vLLM or Ollama)
 * may count the same prompt higher. Each chat call with a usage report feeds reported ÷ estimated into an
 * exponentially weighted mean. The `factor` applied to estimates is that mean clamped to [1, maxFactor]: it may
 * only make the estimate larger, so the budget guard is never loosened by a provider that counts lower (or by a
 * bogus report), and one odd report moves it only by `weight` of the way.
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
  /** One chat call's estimate and the provider's count of the same prompt. Small or empty prompts are ignored. */
  observe(estimatedPromptTokens: number, reportedPromptTokens: number): void;
}

export interface EstimateCorrectionOptions {
  model: string;
  /** Highest factor; past it the estimate is considered broken rather than corrected (default 1.5). */
  maxFactor?: number;
  /** Weight of the newest report in the mean (default 0.2). */
  weight?: number;
  /** Prompts under this many estimated tokens say little about a tokenizer (default 64). */
  minPromptTokens?: number;
}

export function createEstimateCorrection(options: EstimateCorrectionOptions): EstimateCorrection {
  const maxFactor = options.maxFactor ?? 1.5;
  const weight = options.weight ?? 0.2;
  const minPromptTokens = options.minPromptTokens ?? 64;
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
    observe(estimated, reported) {
      if (!Number.isFinite(estimated) || !Number.isFinite(reported) || estimated < minPromptTokens || reported <= 0) return;
      const next = reported / estimated;
      ratio = ratio === null ? next : ratio + weight * (next - ratio);
      samples += 1;
    },
  };
}

/** The budget an estimate must stay within so that estimate × factor stays within `budget`. */
export function correctedBudget(budget: number, factor: number): number {
  return factor <= 1 ? budget : Math.floor(budget / factor);
}
