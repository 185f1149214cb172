import { parseCondition, type KeepPolicy } from './policies';
import type { Result } from './types';

const ACCEPTED_KEEP_FORMS =
  'exactly one of messages=N (newest N entries), tokens=N (newest entries up to N tokens) or ' +
  'fraction=F (newest entries up to F x the model max input tokens, 0 < F <= 1); N a positive integer; e.g. "messages=12"';

/** Parses a keep policy such as `messages=12` (env `SUMMARY_KEEP`; default `DEFAULT_KEEP`). */
export function parseKeepPolicy(text: string, variableName = 'SUMMARY_KEEP'): Result<KeepPolicy> {
  const condition = parseCondition(text);
  if (condition) return { ok: true, value: condition };
  const problem = text.trim() === '' ? 'empty value' : `invalid value "${text.trim()}"`;
  return { ok: false, error: `${variableName}: ${problem}. Accepted: ${ACCEPTED_KEEP_FORMS}.` };
}
