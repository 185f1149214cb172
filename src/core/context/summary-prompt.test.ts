import { describe, expect, it } from 'vitest';
import { DEFAULT_SUMMARY_PROMPT, renderSummaryPrompt, renderTranscriptLine } from './summary-prompt';
import { calls, result, user } from './test-fixtures';

describe('renderSummaryPrompt', () => {
  const entries = [user(12), calls(13, ['c1']), result(14, 'c1')];

  it('asks for intent, facts and decisions, identifiers and next steps, with the cap and seq citations', () => {
    const [system, prompt] = renderSummaryPrompt({
      previousSummary: 'Earlier: [#3] the user wants X.',
      entries,
      maxTokens: 1200,
      fromSeq: 1,
      throughSeq: 14,
    });
    expect(system?.role).toBe('system');
    expect(prompt?.role).toBe('user');
    for (const topic of [
      'Intent',
      'Facts and decisions',
      'Artifacts and identifiers',
      'file path and URL',
      'Open next steps',
    ]) {
      expect(system?.content).toContain(topic);
    }
    expect(system?.content).toContain('at most 1200 tokens');
    expect(system?.content).toContain('[#12] or [#40–44]');
    expect(system?.content).toContain('from #1 to #14');
    expect(prompt?.content).toContain('Earlier: [#3] the user wants X.');
    expect(prompt?.content).toContain('[#12] user: user message 12');
    expect(prompt?.content).toContain('[#13] assistant called lookup({"query":"c1"}) (call c1)');
    expect(prompt?.content).toContain('[#14] tool result (call c1): result of c1');
  });

  it('says there is no previous summary on the first fold', () => {
    const [, prompt] = renderSummaryPrompt({
      previousSummary: null,
      entries,
      maxTokens: 100,
      fromSeq: 12,
      throughSeq: 14,
    });
    expect(prompt?.content).toContain('(none yet)');
  });

  it('uses a replacement template and never substitutes placeholders found in the transcript', () => {
    const tricky = { ...user(1), content: 'literally {{maxTokens}}' };
    const messages = renderSummaryPrompt({
      previousSummary: null,
      entries: [tricky],
      maxTokens: 50,
      fromSeq: 1,
      throughSeq: 1,
      template: { system: 'Cap {{maxTokens}}.', user: '{{transcript}} {{unknown}}' },
    });
    expect(messages).toEqual([
      { role: 'system', content: 'Cap 50.' },
      { role: 'user', content: '[#1] user: literally {{maxTokens}} {{unknown}}' },
    ]);
    expect(DEFAULT_SUMMARY_PROMPT.user).toContain('{{transcript}}');
  });

  it('renders an assistant message with text and calls on two lines', () => {
    const both = { ...calls(5, ['a']), content: 'Let me check.' };
    expect(renderTranscriptLine(both)).toBe(
      '[#5] assistant: Let me check.\n[#5] assistant called lookup({"query":"a"}) (call a)',
    );
  });
});
