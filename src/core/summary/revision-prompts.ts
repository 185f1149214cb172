/** Follow-up prompts of the checked commit: restore missing identifiers, condense an over-long summary. */

export function retentionRetryMessages(input: { summary: string; missing: readonly string[]; maxTokens: number }): { role: 'system' | 'user'; content: string }[] {
  return [
    { role: 'system', content: 'You revise a running summary of a conversation. Keep every fact, decision, open step and citation such as [#12]. Answer with the revised summary only.' },
    {
      role: 'user',
      content: `This summary leaves out identifiers that appear in the messages it covers. Rewrite it in at most ${input.maxTokens} tokens so that it keeps each of them with what it refers to:\n${input.missing.map((identifier) => `- ${identifier}`).join('\n')}\n\nSummary:\n${input.summary}`,
    },
  ];
}

export function condenseSummaryMessages(input: { summary: string; maxTokens: number }): { role: 'system' | 'user'; content: string }[] {
  return [
    { role: 'system', content: 'You condense a running summary of a conversation. Keep identifiers (ids, numbers, names, paths, URLs), decisions, open next steps and citations such as [#12]. Answer with the condensed summary only.' },
    { role: 'user', content: `Condense this summary to at most ${input.maxTokens} tokens:\n\n${input.summary}` },
  ];
}
