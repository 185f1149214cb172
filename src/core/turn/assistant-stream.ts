import type { Turn } from '../domain/types';
import { toMessageDto } from '../dto/api-dto';
import type { LogPort, ThreadEventBus, TurnStore } from '../ports';

/**
 * One streaming assistant message of a turn: the message is created at the first token (deltas arriving
 * meanwhile are buffered), deltas are published as they come, and the text is saved at most every `saveMs`.
 */
export class AssistantStream {
  messageId: string | null = null;
  text = '';
  /** Set once the message is completed: a later failure in the round needs a message of its own. */
  completed = false;
  private creating: Promise<string> | null = null;
  private lastSave = 0;

  constructor(
    private readonly options: { turn: Turn; turns: TurnStore; events: ThreadEventBus; log: LogPort; saveMs: number },
  ) {}

  onDelta(delta: string): void {
    if (!delta) return;
    const offset = this.text.length;
    this.text += delta;
    if (this.messageId) {
      this.options.events.publish({
        type: 'message-delta',
        threadId: this.options.turn.threadId,
        messageId: this.messageId,
        offset,
        delta,
      });
      this.saveThrottled();
    } else {
      // A failed creation is retried by the next delta or by the answer's end (ensureMessage), which throws then.
      void this.ensureMessage().catch((error: unknown) =>
        this.options.log.warn({ err: error }, 'creating the streaming message failed'),
      );
    }
  }

  /** Creates the streaming message once; publishes message-start and the text buffered so far. */
  ensureMessage(): Promise<string> {
    if (this.messageId) return Promise.resolve(this.messageId);
    this.creating ??= (async () => {
      const { turn, turns, events } = this.options;
      const message = await turns.appendTurnMessage({
        threadId: turn.threadId,
        turnId: turn.id,
        role: 'assistant',
        content: '',
        status: 'streaming',
      });
      this.messageId = message.id;
      this.lastSave = Date.now();
      events.publish({ type: 'message-start', threadId: turn.threadId, message: toMessageDto(message) });
      if (this.text)
        events.publish({
          type: 'message-delta',
          threadId: turn.threadId,
          messageId: message.id,
          offset: 0,
          delta: this.text,
        });
      return message.id;
    })().finally(() => {
      this.creating = null;
    });
    return this.creating;
  }

  /** Waits for a creation still in flight, so a partial text lands on its message. */
  async settled(): Promise<void> {
    // The creation's failure reaches its own caller (onDelta logs it, the answer's end rethrows it): only wait here.
    // eslint-disable-next-line no-restricted-syntax -- reported by the creation's caller
    if (this.creating) await this.creating.catch(() => undefined);
  }

  private saveThrottled(): void {
    const now = Date.now();
    if (!this.messageId || now - this.lastSave < this.options.saveMs) return;
    this.lastSave = now;
    this.options.turns
      .saveStreamingText(this.messageId, this.text)
      .catch((error: unknown) => this.options.log.warn({ err: error }, 'saving streaming text failed'));
  }
}
