import type { Thread, TranscriptMessage, Turn } from '../domain/types';
import type { ThreadStore, TranscriptStore, TurnStore } from '../ports';

/** A stored response: the turn that answered it, its thread, and the messages the turn wrote. */
export interface StoredResponse {
  thread: Thread;
  turn: Turn;
  /** The turn's messages (its user message when it had one, the answer's rounds, tombstones of forgotten ones). */
  messages: TranscriptMessage[];
}

export interface FindResponseDeps {
  turns: Pick<TurnStore, 'findTurn'>;
  threads: Pick<ThreadStore, 'findThread'>;
  transcript: Pick<TranscriptStore, 'listTurnMessages'>;
}

/** The messages of an answer a client saw (assistant messages, stored, not superseded); forgotten ones included. */
export function answerMessagesOf(response: StoredResponse): TranscriptMessage[] {
  return response.messages.filter(
    (message) => message.role === 'assistant' && message.seq !== null && !message.superseded,
  );
}

/**
 * The response a turn gave, read for its user: null when the turn is unknown, its thread is another user's or gone,
 * or its answer was forgotten (a deleted response).
 */
export async function findResponse(
  input: { userId: string; turnId: string },
  deps: FindResponseDeps,
): Promise<StoredResponse | null> {
  const turn = await deps.turns.findTurn(input.turnId);
  if (!turn) return null;
  const thread = await deps.threads.findThread(turn.threadId, input.userId);
  if (!thread) return null;
  const found: StoredResponse = { thread, turn, messages: await deps.transcript.listTurnMessages(turn.id) };
  const answer = answerMessagesOf(found);
  if (answer.length > 0 && answer.every((message) => message.deleted)) return null;
  return found;
}
