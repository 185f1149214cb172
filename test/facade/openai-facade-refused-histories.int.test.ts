import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { useChatServer } from '../support/chat-server';
import { chatRequests, openaiClient } from './facade-kit';

const server = useChatServer({ env: { RATE_LIMIT_PER_MINUTE: '30' } });

describe('refused /v1 histories spend the send limit', () => {
  it('45 quick mismatched histories from one user meet a 429 under a 30-per-minute limit', async () => {
    const guest = await server.guest();
    const client = openaiClient(server, { apiKey: guest.token });
    const headers = { 'X-Thread-Id': 'refused-histories' };
    await client.chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] },
      { headers },
    );
    const calls = chatRequests(server).length;
    const statuses: number[] = [];
    for (let index = 0; index < 45; index += 1) {
      // An assistant message the server never wrote: refused (400), and each one compared with the conversation.
      const refused = await client.chat.completions
        .create(
          {
            model: 'gpt-4o-mini',
            messages: [
              { role: 'user', content: 'hello' },
              { role: 'assistant', content: `something the server never said ${index}` },
              { role: 'user', content: 'next' },
            ],
          },
          { headers },
        )
        .catch((error: unknown) => error);
      statuses.push(refused instanceof APIError ? (refused.status ?? 0) : 200);
    }
    // The first request spent one of the 30; 29 refusals spend the rest.
    expect(statuses.slice(0, 29)).toEqual(Array(29).fill(400));
    expect(statuses.slice(29)).toEqual(Array(16).fill(429));
    expect(chatRequests(server).length).toBe(calls);
  });
});
