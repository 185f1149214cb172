import { describe, expect, it } from 'vitest';
import type { ContextPackDto, MessageContextDto, SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import { startTestApp } from '../support/test-app';

async function json<T>(response: Response): Promise<T> {
  const text = await response.text();
  expect(response.ok, text).toBe(true);
  return JSON.parse(text) as T;
}

// Issue 36 item 5: the header's window, the log's budget, the memory panel's "N of M tokens" and "what the model
// saw" are one account: window − reserve = budget; tool definitions first; the pack's parts add up to its tokens.
describe('the budget explanation (memory panel, "what the model saw")', () => {
  it('on the offline demo window, every figure follows from the window, the reserve and the tool definitions', async () => {
    const app = await startTestApp();
    try {
      const { token } = await app.guest();
      const info = await json<{ contextWindow: number; budget: number }>(await app.api('/api/info'));
      const thread = await json<ThreadDto>(await app.api('/api/threads', { method: 'POST', token, json: {} }));
      const sent = await json<SendMessageResponseDto>(
        await app.api(`/api/threads/${thread.id}/messages`, {
          method: 'POST',
          token,
          json: { content: 'Plan the offsite: budget 12,000 euros, venues in Lisbon.' },
        }),
      );
      const pack = await json<ContextPackDto>(await app.api(`/api/threads/${thread.id}/context`, { token }));
      const { explanation } = pack;
      expect(explanation.contextWindow).toBe(info.contextWindow);
      expect(explanation.contextWindow).toBe(2048);
      expect(explanation.budget).toBe(explanation.contextWindow - explanation.reservedOutputTokens);
      expect(explanation.budget).toBe(info.budget);
      expect(explanation.toolSchemas).toBeGreaterThan(0);
      expect(pack.budget).toBe(explanation.correctedBudget - explanation.toolSchemas);
      expect(Object.values(explanation.parts).reduce((sum, tokens) => sum + tokens, 0)).toBe(pack.tokens);
      expect(explanation.parts.window).toBeGreaterThan(0);

      const answer = sent.messages.find((message) => message.role === 'assistant')!;
      const seen = await json<MessageContextDto>(
        await app.api(`/api/threads/${thread.id}/messages/${answer.id}/context`, { token }),
      );
      expect(seen.limits).toEqual({
        contextWindow: explanation.contextWindow,
        reservedOutputTokens: explanation.reservedOutputTokens,
        budget: explanation.budget,
      });
      expect(seen.parts?.toolSchemas).toBe(explanation.toolSchemas);
    } finally {
      await app.stop();
    }
  });
});
