import type { BudgetExplanationDto } from '../../../src/shared/api';

type Limits = Pick<BudgetExplanationDto, 'contextWindow' | 'reservedOutputTokens' | 'budget'>;

/** Exact figures with thousands separators (as the header writes the window): these are meant to add up. */
export function exactTokens(tokens: number): string {
  return tokens.toLocaleString('en-US');
}

/** "Window 2,048 − 512 reserved for the answer = budget 1,536 tokens": where every other figure starts. */
export function budgetSentence(limits: Limits): string {
  return (
    `Window ${exactTokens(limits.contextWindow)} − ${exactTokens(limits.reservedOutputTokens)} reserved for the ` +
    `answer = budget ${exactTokens(limits.budget)} tokens.`
  );
}

/**
 * How the memory panel's figures relate: the window less the reserve is the budget; the offered tool definitions
 * take their share of it first; the pack's parts share the rest (the gauge above is the pack against that rest).
 */
export function BudgetExplanation(props: {
  explanation: BudgetExplanationDto;
  packTokens: number;
  packBudget: number;
}) {
  const { explanation } = props;
  const { parts } = explanation;
  const other = parts.notes + parts.priming;
  const items: [string, number][] = [
    ['system prompt', parts.systemPrefix],
    ...(parts.savedMemories > 0 ? [['saved memories', parts.savedMemories] as [string, number]] : []),
    ['summary', parts.summary],
    ['pinned', parts.pinned],
    ['window', parts.window],
    ['recalled', parts.recall],
    ['notes and reply priming', other],
  ];
  return (
    <p className="figures budget-explanation" data-testid="budget-explanation">
      {budgetSentence(explanation)}
      {explanation.correctedBudget < explanation.budget
        ? ` Our estimates run low on this model (reported usage), so it counts as ${exactTokens(explanation.correctedBudget)}.`
        : ''}{' '}
      Tool definitions take {exactTokens(explanation.toolSchemas)}, leaving {exactTokens(props.packBudget)} for the
      conversation; the next call uses {exactTokens(props.packTokens)}:{' '}
      {items.map(([label, tokens]) => `${label} ${exactTokens(tokens)}`).join(' · ')}.
    </p>
  );
}
