import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { useChatServer } from '../support/chat-server';
import {
  echoResponder,
  lastUserText,
  replyWithText,
  replyWithToolCalls,
  type StubResponder,
} from '../support/openai-stub';
import { chatRequests, openaiClient, SERVICE_KEY, streamTurn } from './facade-kit';

// An answer that carries a saved memory's note ("[memory] …", written by the server when the model's save_memory
// tool ran) is one answer to the client, note included. The database's chain hashes must hash it so (client-view.ts,
// isAnswerNote): else a history holding it is found by hash only up to the user message before it, and a long
// conversation with a few such answers takes reading more than FACADE_MAX_READ_MESSAGES to match, and is refused.

/** "Remember: <fact>" makes the model call save_memory with the fact; the tool's answer gets a short reply. */
const responder: StubResponder = (request) => {
  const last = request.body.messages.at(-1);
  if (last?.role === 'tool') return replyWithText('Noted.');
  const asked = /^Remember: (.+)$/.exec(lastUserText(request.body));
  if (asked) return replyWithToolCalls([{ name: 'save_memory', arguments: { text: asked[1] } }]);
  return echoResponder(request);
};

describe('/v1: a history holding answers with saved-memory notes is matched by hash', () => {
  const server = useChatServer({
    stub: { responder },
    env: { OPENAI_FACADE_KEYS: SERVICE_KEY, FACADE_MAX_READ_MESSAGES: '20', RATE_LIMIT_PER_MINUTE: '1000' },
  });

  it('a conversation with two noted answers far apart goes on in the same thread, within 20 messages read', async () => {
    const client = openaiClient(server, {
      apiKey: SERVICE_KEY,
      headers: { 'X-User-Id': 'dora-notes', 'X-Thread-Id': 'noted-conversation' },
    });
    const history: ChatCompletionMessageParam[] = [];
    let threadId: string | null = null;
    const turn = async (text: string) => {
      const sent = await streamTurn(client, history, text);
      threadId ??= sent.threadId;
      expect(sent.threadId).toBe(threadId);
      history.push({ role: 'user', content: text }, { role: 'assistant', content: sent.answer });
      return sent.answer;
    };
    expect(await turn('Remember: I take the 7:40 train.')).toBe(
      '[memory] Proposed for your saved memories (approve or dismiss it in Saved memories): "I take the 7:40 train."\n\nNoted.',
    );
    // More than one window of the matching (16 messages) between the two noted answers.
    for (let index = 1; index <= 9; index += 1) await turn(`question ${index}`);
    expect(await turn('Remember: I live in Oslo.')).toContain('[memory] Proposed');
    const before = chatRequests(server).length;
    const last = await turn('Where do I live?');
    expect(last).toBeTruthy();
    // One upstream call for the new message: the history matched (no refusal), the thread went on, and the model
    // got the conversation once.
    expect(chatRequests(server)).toHaveLength(before + 1);
    const upstream = chatRequests(server).at(-1)?.body.messages ?? [];
    expect(upstream.filter((message) => message.role === 'user')).toHaveLength(12);
  });
});
