import type { MessageMeasure } from './measure-message';
import type { ContextEntry, PackMessage, ToolCall } from './types';

function asMessage(entry: ContextEntry): PackMessage {
  const message: PackMessage = { role: entry.role, content: entry.content, seq: entry.seq, tokens: entry.tokens };
  if (entry.toolCalls && entry.toolCalls.length > 0) message.toolCalls = entry.toolCalls;
  if (entry.toolCallId !== undefined) message.toolCallId = entry.toolCallId;
  return message;
}

function describeUnansweredCall(call: ToolCall): string {
  return `[Called tool ${call.name}(${JSON.stringify(call.args)}) as ${call.id}; its result is not in this context]`;
}

function renderOrphanResult(entry: ContextEntry, measure: MessageMeasure): PackMessage {
  const content = `[Result of tool call ${entry.toolCallId ?? '(no id)'}, whose request is not in this context]\n${entry.content}`;
  return { role: 'system', content, seq: entry.seq, tokens: measure({ role: 'system', content }) };
}

/**
 * Renders entries (ascending seq) as OpenAI-valid messages with the same information: each assistant message with
 * tool calls is followed directly by the tool messages answering it, in call order (answers recorded later, after
 * other messages, move up); calls without an answer in `entries` become text on the assistant message; tool
 * messages without their call in `entries` become system text. Unchanged entries keep their stored tokens;
 * rewritten messages are measured with `measure`.
 */
export function renderEntries(entries: readonly ContextEntry[], measure: MessageMeasure): PackMessage[] {
  const consumed = new Set<number>();
  const messages: PackMessage[] = [];
  entries.forEach((entry, index) => {
    if (consumed.has(index)) return;
    if (entry.role === 'tool') {
      messages.push(renderOrphanResult(entry, measure));
      return;
    }
    const calls = entry.role === 'assistant' ? (entry.toolCalls ?? []) : [];
    if (calls.length === 0) {
      messages.push(asMessage(entry));
      return;
    }
    const answers: number[] = [];
    const unanswered: ToolCall[] = [];
    for (const call of calls) {
      const answer = entries.findIndex((candidate, at) =>
        at > index && !consumed.has(at) && candidate.role === 'tool' && candidate.toolCallId === call.id);
      if (answer === -1) {
        unanswered.push(call);
      } else {
        consumed.add(answer);
        answers.push(answer);
      }
    }
    if (unanswered.length === 0) {
      messages.push(asMessage(entry));
    } else {
      const content = [entry.content, ...unanswered.map(describeUnansweredCall)].filter((part) => part !== '').join('\n');
      const answered = calls.filter((call) => !unanswered.includes(call));
      const message: PackMessage = { role: 'assistant', content, seq: entry.seq, tokens: 0 };
      if (answered.length > 0) message.toolCalls = answered;
      message.tokens = measure(message);
      messages.push(message);
    }
    for (const answer of answers) {
      const result = entries[answer];
      if (result) messages.push(asMessage(result));
    }
  });
  return messages;
}
