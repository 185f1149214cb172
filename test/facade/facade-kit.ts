import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import type { ChatServer } from '../support/chat-server';
import type { StubRequest } from '../support/openai-stub';

/** A service key of the test server (OPENAI_FACADE_KEYS). */
export const SERVICE_KEY = 'facade-test-service-key-0123456789abcdef';

/** The official SDK against the server's /v1, no retries (a test sees every refusal as it is). */
export function openaiClient(
  server: ChatServer,
  options: { apiKey?: string; headers?: Record<string, string> } = {},
): OpenAI {
  return new OpenAI({
    apiKey: options.apiKey ?? server.token,
    baseURL: `${server.app.baseUrl}/v1`,
    maxRetries: 0,
    defaultHeaders: options.headers ?? {},
  });
}

/** The text of every message of an upstream request, joined. */
export function requestText(request: StubRequest): string {
  return request.body.messages.map((message) => wireContentText(message.content)).join('\n');
}

/** The chat (not summarizer) requests the stub received. */
export function chatRequests(server: ChatServer): StubRequest[] {
  return server.stub.requests.filter((request) => request.kind === 'chat');
}

/** Sends `history` + a user message with the SDK, streamed, and returns the answer text and the thread id header. */
export async function streamTurn(
  client: OpenAI,
  history: ChatCompletionMessageParam[],
  text: string,
  headers: Record<string, string> = {},
): Promise<{ answer: string; threadId: string | null; usage: OpenAI.CompletionUsage | null; chunks: number }> {
  const { data: stream, response } = await client.chat.completions
    .create(
      {
        model: 'gpt-4o-mini',
        messages: [...history, { role: 'user', content: text }],
        stream: true,
        stream_options: { include_usage: true },
      },
      { headers },
    )
    .withResponse();
  let answer = '';
  let usage: OpenAI.CompletionUsage | null = null;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks += 1;
    answer += chunk.choices[0]?.delta.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  return { answer, threadId: response.headers.get('x-chat-thread-id'), usage, chunks };
}
