import { wireContentText } from '../../src/llm/count-chat-tokens';
import type { MessageDto } from '../../src/shared/api';
import type { ChatServer, ChatServerOptions } from '../support/chat-server';
import { lastUserText, replyWithText, type StubRequest, type StubResponder } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';

/** The text of every message of an upstream request, joined. */
export function packText(request: StubRequest): string {
  return request.body.messages.map((message) => wireContentText(message.content)).join('\n');
}

/** The chat (not summarizer) requests the stub received. */
export function chatPacks(server: ChatServer): StubRequest[] {
  return server.stub.requests.filter((request) => request.kind === 'chat');
}

/**
 * Echoes the user ("stub reply to: …"); asked "which code", answers with every CODE-n its pack holds (the summary's,
 * the window's), so a test sees what the model was given.
 */
export const codeAwareChat: StubResponder = (request) => {
  const text = lastUserText(request.body);
  if (/which code/i.test(text)) {
    const codes = [...new Set(packText(request).match(/CODE-\d+/g) ?? [])];
    return replyWithText(`The codes I know: ${codes.join(', ') || 'none'}.`);
  }
  return replyWithText(`stub reply to: ${text}`, { chunks: ['stub reply ', `to: ${text}`] });
};

/** A server whose chats fold early (8 messages, 4 kept), with a summarizer that keeps every CODE-n. */
export const FOLDING_SERVER: ChatServerOptions = {
  stub: { classifyRequest, responder: summaryResponder({ chat: codeAwareChat }) },
  env: { SUMMARY_TRIGGER: 'messages=8', SUMMARY_KEEP: 'messages=4', RECALL_TOKENS: '0' },
};

/** The web app's view of a thread (REST), oldest first. */
export async function threadMessages(
  server: ChatServer,
  threadId: string,
  token = server.token,
): Promise<MessageDto[]> {
  const response = await server.app.api(`/api/threads/${threadId}/messages?limit=200`, { token });
  if (response.status !== 200) throw new Error(`GET messages answered ${response.status}`);
  return ((await response.json()) as { messages: MessageDto[] }).messages;
}

/** The thread a conversation id names (conv_<thread id without dashes>). */
export function threadOfConversation(conversationId: string): string {
  return conversationId.slice('conv_'.length).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
}

/** The user's threads, as the web app lists them. */
export async function threadCount(server: ChatServer, token = server.token): Promise<number> {
  const response = await server.app.api('/api/threads', { token });
  return ((await response.json()) as { threads: unknown[] }).threads.length;
}
