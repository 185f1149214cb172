import { formatCondition, parseCondition, type TriggerPolicy } from './policies';
import type { Result } from './types';

const ACCEPTED_TRIGGER_FORMS =
  'a comma-separated list of tokens=N (window + summary tokens >= N), messages=N (window entries >= N) and ' +
  'fraction=F (>= F x the model max input tokens, 0 < F <= 1), each kind at most once; N a positive integer; ' +
  'e.g. "tokens=6000,fraction=0.75"';

/**
 * Parses a trigger policy such as `tokens=6000,fraction=0.75` (env `SUMMARY_TRIGGER`; default `DEFAULT_TRIGGER`).
 * The error names the variable and the accepted forms.
 */
export function parseTriggerPolicy(text: string, variableName = 'SUMMARY_TRIGGER'): Result<TriggerPolicy> {
  const fail = (problem: string): Result<TriggerPolicy> => ({
    ok: false,
    error: `${variableName}: ${problem}. Accepted: ${ACCEPTED_TRIGGER_FORMS}.`,
  });
  if (text.trim() === '') return fail('empty value');
  const conditions = [];
  const seen = new Set<string>();
  for (const term of text.split(',')) {
    const condition = parseCondition(term);
    if (!condition) return fail(`invalid term "${term.trim()}"`);
    if (seen.has(condition.kind)) return fail(`"${condition.kind}" given twice`);
    seen.add(condition.kind);
    conditions.push(condition);
  }
  return { ok: true, value: { conditions } };
}

/** Renders a trigger policy back to its string form. */
export function formatTriggerPolicy(policy: TriggerPolicy): string {
  return policy.conditions.map(formatCondition).join(',');
}
