import type { MessageContextDto } from '../../shared/api';

/** Read model of "what the model saw" for one reply: its call's manifest joined with what the store keeps now. */
export interface MessageContextReader {
  /**
   * The chat call that produced `messageId` of `threadId`; NOT_FOUND when the message has none (not an answer).
   * The system prompt's text is only in the answer with `systemPromptText` (admins); otherwise its hash and tokens.
   */
  /** What the call was given; the routes add the deployment's `limits`. */
  forMessage(
    threadId: string,
    messageId: string,
    options: { systemPromptText: boolean },
  ): Promise<Omit<MessageContextDto, 'limits'>>;
}
