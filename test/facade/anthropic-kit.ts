import Anthropic from '@anthropic-ai/sdk';
import type { ChatServer } from '../support/chat-server';
import type { MessageDto, ThreadDto } from '../../src/shared/api';

/** The model name the Anthropic tests send (an alias of CHAT_MODEL: FACADE_MODEL_ALIASES). */
export const CLAUDE_MODEL = 'claude-sonnet-4-5';

/** The official Anthropic SDK against the server's root (it appends /v1/messages), no retries. */
export function anthropicClient(
  server: ChatServer,
  options: { apiKey?: string; authToken?: string; headers?: Record<string, string> } = {},
): Anthropic {
  return new Anthropic({
    ...(options.authToken
      ? { authToken: options.authToken, apiKey: null }
      : { apiKey: options.apiKey ?? server.token }),
    baseURL: server.app.baseUrl,
    maxRetries: 0,
    defaultHeaders: options.headers ?? {},
  });
}

/** A thread's messages as the REST API lists them. */
export async function threadMessages(
  server: ChatServer,
  threadId: string,
  token = server.token,
): Promise<MessageDto[]> {
  const response = await server.app.api(`/api/threads/${threadId}/messages?limit=200`, { token });
  if (response.status !== 200) throw new Error(`GET messages of ${threadId}: ${response.status}`);
  return ((await response.json()) as { messages: MessageDto[] }).messages;
}

/** A thread as the REST API shows it (null: not the user's). */
export async function threadOf(server: ChatServer, threadId: string, token = server.token): Promise<ThreadDto | null> {
  const response = await server.app.api(`/api/threads/${threadId}`, { token });
  if (response.status === 404) return null;
  return (await response.json()) as ThreadDto;
}

/** The text of an answer's text blocks. */
export function textOf(message: Anthropic.Message): string {
  return message.content
    .filter((block): block is Anthropic.TextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('');
}
