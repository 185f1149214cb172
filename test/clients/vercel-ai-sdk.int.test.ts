import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import { useChatServer } from '../support/chat-server';
import { chatPacks, FOLDING_SERVER, packText, threadMessages } from './clients-kit';

// The Vercel AI SDK (`ai` 6 with `@ai-sdk/openai` 3): its Responses provider against the server's /v1/responses.
const server = useChatServer(FOLDING_SERVER);

function provider(apiKey = server.token) {
  return createOpenAI({ baseURL: `${server.app.baseUrl}/v1`, apiKey });
}

/** The response id an AI SDK call reports (providerMetadata.openai.responseId). */
function responseIdOf(result: { providerMetadata?: Record<string, Record<string, unknown>> | undefined }): string {
  const id = result.providerMetadata?.openai?.responseId;
  if (typeof id !== 'string') throw new Error('no responseId in providerMetadata.openai');
  return id;
}

describe('the Vercel AI SDK on /v1/responses', () => {
  it('generateText and streamText answer, chained by previousResponseId on one thread', async () => {
    const model = provider().responses('gpt-4o-mini');
    const first = await generateText({ model, prompt: 'Remember the code CODE-5050.' });
    expect(first.text).toBe('stub reply to: Remember the code CODE-5050.');
    expect(first.usage.inputTokens).toBe(chatPacks(server).at(-1)?.promptTokens);
    const streamed = streamText({
      model,
      prompt: 'a streamed question',
      providerOptions: { openai: { previousResponseId: responseIdOf(first) } },
    });
    let text = '';
    for await (const delta of streamed.textStream) text += delta;
    expect(text).toBe('stub reply to: a streamed question');
    const streamedId = responseIdOf({ providerMetadata: await streamed.providerMetadata });
    const last = await generateText({
      model,
      prompt: 'Which code did I give you?',
      providerOptions: { openai: { previousResponseId: streamedId } },
    });
    expect(last.text).toContain('CODE-5050');
    const pack = chatPacks(server).at(-1)!;
    // Only the new message was sent: the earlier turns come from the thread.
    expect(packText(pack)).toContain('a streamed question');
    const threadId = (
      (await (await server.app.api('/api/threads', { token: server.token })).json()) as { threads: { id: string }[] }
    ).threads[0]!.id;
    expect((await threadMessages(server, threadId)).map((message) => message.content)).toEqual([
      'Remember the code CODE-5050.',
      'stub reply to: Remember the code CODE-5050.',
      'a streamed question',
      'stub reply to: a streamed question',
      'Which code did I give you?',
      last.text,
    ]);
  });

  it("a stranger's previousResponseId is refused as previous_response_not_found", async () => {
    const model = provider().responses('gpt-4o-mini');
    const mine = await generateText({ model, prompt: 'mine only' });
    const stranger = await server.guest();
    const error = await generateText({
      model: provider(stranger.token).responses('gpt-4o-mini'),
      prompt: 'peek',
      maxRetries: 0,
      providerOptions: { openai: { previousResponseId: responseIdOf(mine) } },
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ statusCode: 400 });
    expect(String((error as { responseBody?: string }).responseBody)).toContain('previous_response_not_found');
  });
});
