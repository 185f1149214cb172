import { AppError } from '../../core/errors/app-error';
import type { TranscriptMessage } from '../../core/domain/types';
import type { TranscriptStore } from '../../core/ports/transcript-store';
import { outputTextPart } from './response-object';

/** Messages read from the transcript per round while a page of items is gathered. */
const MESSAGES_PER_READ = 100;

/** Reads of the transcript one page may take (forgotten and superseded messages are skipped, not counted). */
const MAX_READS = 10;

const hexOf = (uuid: string) => uuid.replace(/-/g, '');

function uuidOfHex(hex: string): string | null {
  if (!/^[0-9a-f]{32}$/.test(hex)) return null;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** What an item id names: the transcript message it stands for. */
export function messageOfItemId(itemId: string): string | null {
  const match = /^(?:msg|fc)_([0-9a-f]{32})(?:_\d{1,3})?$/.exec(itemId);
  return match ? uuidOfHex(match[1]!) : null;
}

/** Whether a transcript message is part of the conversation's items (not forgotten, not superseded, written). */
function visible(message: TranscriptMessage): boolean {
  if (message.deleted || message.superseded || message.seq === null) return false;
  return message.status === 'complete' || (message.status === 'cancelled' && message.content !== '');
}

/**
 * A transcript message as Responses items, ids derived from the message id: a user or system message is one
 * `message` item; an answer is a `message` item (left out when it only called tools) then one `function_call` per
 * call (`fc_<message>_<index>`); a tool result is a `function_call_output` (`fc_<message>`).
 */
export function itemsOfMessage(message: TranscriptMessage) {
  if (!visible(message)) return [];
  const id = hexOf(message.id);
  const status = message.status === 'complete' ? ('completed' as const) : ('incomplete' as const);
  if (message.role === 'tool')
    return [
      {
        type: 'function_call_output' as const,
        id: `fc_${id}`,
        call_id: message.toolCallId ?? '',
        output: message.content,
        status,
      },
    ];
  if (message.role !== 'assistant')
    return [
      {
        type: 'message' as const,
        id: `msg_${id}`,
        role: message.role,
        status,
        content: [{ type: 'input_text' as const, text: message.content }],
      },
    ];
  const calls = (message.toolCalls ?? []).map((call, index) => ({
    type: 'function_call' as const,
    id: `fc_${id}_${index}`,
    call_id: call.id,
    name: call.name,
    arguments: JSON.stringify(call.args),
    status,
  }));
  if (message.content === '' && calls.length > 0) return calls;
  const text = {
    type: 'message' as const,
    id: `msg_${id}`,
    role: 'assistant' as const,
    status,
    content: [outputTextPart(message.content)],
  };
  return [text, ...calls];
}

export type ConversationItem = ReturnType<typeof itemsOfMessage>[number];

/** The item an id names in the thread, or null (unknown, forgotten, superseded, another thread's). */
export async function findConversationItem(
  transcript: TranscriptStore,
  threadId: string,
  itemId: string,
): Promise<{ item: ConversationItem; message: TranscriptMessage } | null> {
  const messageId = messageOfItemId(itemId);
  const message = messageId ? await transcript.findMessage(threadId, messageId) : null;
  const item = message ? itemsOfMessage(message).find((each) => each.id === itemId) : undefined;
  return message && item ? { item, message } : null;
}

/** A page of the list route's query (OpenAI's parameters). */
export interface ItemsQuery {
  after?: string | undefined;
  limit: number;
  order: 'asc' | 'desc';
}

/** The messages of the page read after `cursor` (exclusive) in the query's order; the anchor message itself first. */
async function readMessages(
  transcript: TranscriptStore,
  threadId: string,
  order: 'asc' | 'desc',
  cursor: number | null,
) {
  const page =
    order === 'asc'
      ? await transcript.listMessages({ threadId, after: cursor ?? 0, limit: MESSAGES_PER_READ })
      : await transcript.listMessages({
          threadId,
          ...(cursor !== null ? { before: cursor } : {}),
          limit: MESSAGES_PER_READ,
        });
  const messages = page.messages.filter((message) => message.seq !== null);
  return {
    messages: order === 'asc' ? messages : messages.reverse(),
    more: order === 'asc' ? page.hasMoreAfter : page.hasMoreBefore,
  };
}

/** The anchor of `after`: the message it names and the items of it still to come (those after it). */
async function anchorOf(transcript: TranscriptStore, threadId: string, query: ItemsQuery) {
  if (query.after === undefined) return null;
  const messageId = messageOfItemId(query.after);
  const message = messageId ? await transcript.findMessage(threadId, messageId) : null;
  if (!message || message.seq === null)
    throw new AppError('VALIDATION', `after: no item '${query.after}' in this conversation`, {
      details: { field: 'after' },
    });
  const items = itemsOfMessage(message);
  if (query.order === 'desc') items.reverse();
  const index = items.findIndex((item) => item.id === query.after);
  return { seq: message.seq, rest: index >= 0 ? items.slice(index + 1) : [] };
}

/**
 * One cursor page of a thread's items in OpenAI's list shape, read from the transcript a bounded number of
 * messages at a time (forgotten, superseded and unwritten messages left out).
 */
export async function pageOfConversationItems(transcript: TranscriptStore, threadId: string, query: ItemsQuery) {
  const anchor = await anchorOf(transcript, threadId, query);
  const gathered: ConversationItem[] = [...(anchor?.rest ?? [])];
  let cursor = anchor?.seq ?? null;
  let more = true;
  for (let read = 0; read < MAX_READS && more && gathered.length <= query.limit; read += 1) {
    const page = await readMessages(transcript, threadId, query.order, cursor);
    for (const message of page.messages) {
      const items = itemsOfMessage(message);
      gathered.push(...(query.order === 'desc' ? items.reverse() : items));
    }
    more = page.more && page.messages.length > 0;
    cursor = page.messages.at(-1)?.seq ?? cursor;
  }
  const data = gathered.slice(0, query.limit);
  return {
    object: 'list' as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: gathered.length > query.limit || more,
  };
}
