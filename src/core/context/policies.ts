/** One measure of a window: `tokens=N`, `messages=N` or `fraction=F` (of the model's max input tokens). */
export type PolicyCondition =
  { kind: 'tokens'; value: number } | { kind: 'messages'; value: number } | { kind: 'fraction'; value: number };

/** When to fold: any condition fires (comparisons are >=). */
export interface TriggerPolicy {
  conditions: PolicyCondition[];
}

/** How much of the window stays after a fold. */
export type KeepPolicy = PolicyCondition;

/** The token threshold of the default `SUMMARY_TRIGGER` where the window allows it. */
export const DEFAULT_TRIGGER_TOKENS = 6000;
/** Default `SUMMARY_TRIGGER` of windows of 16k tokens and more (smaller ones derive theirs: deriveContextDefaults). */
export const DEFAULT_TRIGGER = `tokens=${DEFAULT_TRIGGER_TOKENS},fraction=0.75`;
/** Default `SUMMARY_KEEP`. */
export const DEFAULT_KEEP = 'messages=12';
/** Default `SUMMARY_MAX_TOKENS`: the cap the summarizer is told, and enforced before commit. */
export const DEFAULT_SUMMARY_MAX_TOKENS = 1200;
/** Default `SUMMARY_INPUT_MAX_TOKENS`: the summarizer's input budget per chunk. */
export const DEFAULT_SUMMARIZER_INPUT_MAX_TOKENS = 6000;

/** Parses one `kind=value` term; `undefined` when it is not one of the accepted forms. */
export function parseCondition(term: string): PolicyCondition | undefined {
  const match = /^\s*(tokens|messages|fraction)\s*=\s*([0-9]*\.?[0-9]+)\s*$/.exec(term);
  if (!match) return undefined;
  const kind = match[1] as PolicyCondition['kind'];
  const value = Number(match[2]);
  if (kind === 'fraction') return value > 0 && value <= 1 ? { kind, value } : undefined;
  return Number.isInteger(value) && value > 0 ? { kind, value } : undefined;
}

/** Renders a condition back to its policy-string form. */
export function formatCondition(condition: PolicyCondition): string {
  return `${condition.kind}=${condition.value}`;
}
