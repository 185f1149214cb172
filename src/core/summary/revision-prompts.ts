/** Follow-up prompts of the checked commit: restore missing identifiers, condense an over-long summary. */

export function retentionRetryMessages(input: {
  summary: string;
  missing: readonly string[];
  maxTokens: number;
}): { role: 'system' | 'user'; content: string }[] {
  return [
    {
      role: 'system',
      content:
        'You revise a running summary of a conversation. Keep every fact, decision, open step and citation such as [#12]. Answer with the revised summary only.',
    },
    {
      role: 'user',
      content: `This summary leaves out identifiers that appear in the messages it covers. Rewrite it in at most ${input.maxTokens} tokens so that it keeps each of them with what it refers to:\n${input.missing.map((identifier) => `- ${identifier}`).join('\n')}\n\nSummary:\n${input.summary}`,
    },
  ];
}

export function condenseSummaryMessages(input: {
  summary: string;
  maxTokens: number;
}): { role: 'system' | 'user'; content: string }[] {
  return [
    {
      role: 'system',
      content:
        'You condense a running summary of a conversation. Keep identifiers (ids, numbers, names, paths, URLs), decisions, open next steps and citations such as [#12]. Answer with the condensed summary only.',
    },
    { role: 'user', content: `Condense this summary to at most ${input.maxTokens} tokens:\n\n${input.summary}` },
  ];
}

/**
 * A consolidation: the summary's segments rewritten into one. A thread's own summary prompt is the system message
 * (it applies to every summary the thread gets); the instruction to consolidate is in the user message either way.
 */
export function consolidateSummaryMessages(input: {
  summary: string;
  maxTokens: number;
  summaryPrompt?: string | undefined;
}): { role: 'system' | 'user'; content: string }[] {
  const system = input.summaryPrompt
    ? input.summaryPrompt.replace(/\{\{maxTokens\}\}/g, String(input.maxTokens))
    : `You consolidate a running summary of a conversation, written in segments, into one of at most ${input.maxTokens} tokens. Keep identifiers (ids, numbers, names, paths, URLs), decisions, open next steps and citations such as [#12]; where a later segment supersedes an earlier point, keep the later one. Answer with the consolidated summary only.`;
  return [
    { role: 'system', content: system },
    {
      role: 'user',
      content: `Consolidate this summary, written in segments oldest first, into one summary of at most ${input.maxTokens} tokens:\n\n${input.summary}`,
    },
  ];
}
