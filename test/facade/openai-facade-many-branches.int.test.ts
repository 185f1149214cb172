import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { MAX_BRANCHES_COMPARED } from '../../src/core/facade/start-chat-completion';
import type { MessageDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { openaiClient, streamTurn } from './facade-kit';

const server = useChatServer({ env: { FORKS_PER_MINUTE: '100', RATE_LIMIT_PER_MINUTE: '100' } });

async function contentsOf(threadId: string, token: string): Promise<string[]> {
  const response = await server.app.api(`/api/threads/${threadId}/messages?limit=100`, { token });
  return ((await response.json()) as { messages: MessageDto[] }).messages.map((message) => message.content);
}

describe('a conversation with more branches than a request compares', () => {
  it('a history going back to an old branch goes on there, not on a fork', { timeout: 60_000 }, async () => {
    const guest = await server.guest();
    const client = openaiClient(server, { apiKey: guest.token });
    const headers = { 'X-Thread-Id': 'many-branches' };
    const opening: ChatCompletionMessageParam[] = [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'stub reply to: one' },
    ];
    const original = (await streamTurn(client, [], 'one', headers)).threadId!;
    await streamTurn(client, opening, 'two', headers);
    // Editing the second message again and again: a branch each time, more than are compared.
    const branches: string[] = [];
    for (let index = 1; index <= MAX_BRANCHES_COMPARED + 1; index += 1) {
      const edited = await streamTurn(client, opening, `two v${index}`, headers);
      expect(edited.threadId).not.toBe(original);
      branches.push(edited.threadId!);
    }
    expect(new Set(branches).size).toBe(MAX_BRANCHES_COMPARED + 1);

    // Back to the original branch, the least recently active of all, then to the first edit.
    const back = await streamTurn(
      client,
      [...opening, { role: 'user', content: 'two' }, { role: 'assistant', content: 'stub reply to: two' }],
      'three',
      headers,
    );
    expect(back.threadId).toBe(original);
    expect(await contentsOf(original, guest.token)).toEqual([
      'one',
      'stub reply to: one',
      'two',
      'stub reply to: two',
      'three',
      'stub reply to: three',
    ]);
    const first = await streamTurn(
      client,
      [...opening, { role: 'user', content: 'two v1' }, { role: 'assistant', content: 'stub reply to: two v1' }],
      'more',
      headers,
    );
    expect(first.threadId).toBe(branches[0]);
    expect(await contentsOf(branches[0]!, guest.token)).toEqual([
      'one',
      'stub reply to: one',
      'two v1',
      'stub reply to: two v1',
      'more',
      'stub reply to: more',
    ]);
    const threads = (
      (await (await server.app.api('/api/threads?limit=100', { token: guest.token })).json()) as { threads: unknown[] }
    ).threads;
    expect(threads).toHaveLength(MAX_BRANCHES_COMPARED + 2);
  });
});
