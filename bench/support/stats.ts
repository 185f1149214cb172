/** The q-quantile (0..1) of `values` by nearest rank; NaN for none. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((sum, value) => sum + value, 0) / values.length;
}

export interface Distribution {
  n: number;
  p50: number;
  p99: number;
  mean: number;
}

export function distribution(values: readonly number[]): Distribution {
  return { n: values.length, p50: quantile(values, 0.5), p99: quantile(values, 0.99), mean: mean(values) };
}

export const round = (value: number, digits = 2): number => Math.round(value * 10 ** digits) / 10 ** digits;
