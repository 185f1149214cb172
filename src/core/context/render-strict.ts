import type { MessageMeasure } from './measure-message';
import type { PackMessage } from './types';

/** Placed first when a strict pack would otherwise open with an assistant message. */
export const STRICT_OPENING_USER_TEXT = '(The conversation continues.)';

function toolCallText(message: PackMessage): string {
  const calls = (message.toolCalls ?? []).map(
    (call) => `[Tool call ${call.id}: ${call.name}(${JSON.stringify(call.args)})]`,
  );
  return [message.content, ...calls].filter((part) => part !== '').join('\n');
}

function rewrite(
  message: PackMessage,
  role: PackMessage['role'],
  content: string,
  measure: MessageMeasure,
): PackMessage {
  const rewritten: PackMessage = { role, content, tokens: 0 };
  if (message.seq !== undefined) rewritten.seq = message.seq;
  rewritten.tokens = measure(rewritten);
  return rewritten;
}

/** One message per role change: server notes, tool calls and results become text. */
function toTextMessages(messages: readonly PackMessage[], measure: MessageMeasure): PackMessage[] {
  return messages.map((message, index) => {
    if (index === 0) return message;
    if (message.role === 'system') return rewrite(message, 'user', `[Server note] ${message.content}`, measure);
    if (message.role === 'tool') {
      return rewrite(message, 'user', `[Tool result ${message.toolCallId ?? ''}]\n${message.content}`, measure);
    }
    if ((message.toolCalls?.length ?? 0) > 0) return rewrite(message, 'assistant', toolCallText(message), measure);
    return message;
  });
}

function mergeSameRole(messages: readonly PackMessage[], measure: MessageMeasure): PackMessage[] {
  const merged: PackMessage[] = [];
  for (const message of messages) {
    const previous = merged[merged.length - 1];
    if (previous && previous.role === message.role) {
      const content = `${previous.content}\n\n${message.content}`;
      const combined: PackMessage = { role: message.role, content, tokens: 0 };
      combined.tokens = measure(combined);
      merged[merged.length - 1] = combined;
    } else {
      merged.push(message);
    }
  }
  return merged;
}

/**
 * Re-renders an OpenAI-shaped pack (leading system message first) for strict chat templates, with the same
 * information: every later system message (the per-call parts) becomes user text
 * (`[Server note] …`), never part of the leading message, so the leading message stays the same from call to call;
 * tool calls and results become assistant and user text; consecutive messages of one role merge (so the per-call
 * parts join the newest user turn); a pack whose first turn is the assistant's opens with a short user
 * line. Rewritten messages are measured again, so `tokens` stays accurate.
 */
export function renderStrict(messages: readonly PackMessage[], measure: MessageMeasure): PackMessage[] {
  const [leading, ...rest] = messages;
  if (!leading) return [];
  const body = toTextMessages([leading, ...rest], measure).slice(1);
  if (leading.role === 'system' && body[0]?.role === 'assistant') {
    const opening: PackMessage = { role: 'user', content: STRICT_OPENING_USER_TEXT, tokens: 0 };
    opening.tokens = measure(opening);
    body.unshift(opening);
  }
  return mergeSameRole([leading, ...body], measure);
}
