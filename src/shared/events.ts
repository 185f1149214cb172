import type { ErrorBody } from './errors';
import type { MessageDto } from './api';

/** Events the server emits to a thread's subscribers (socket rooms, SSE streams). */
export type ThreadEvent =
  | { type: 'message-created'; threadId: string; message: MessageDto }
  | { type: 'message-start'; threadId: string; message: MessageDto }
  | { type: 'message-delta'; threadId: string; messageId: string; offset: number; delta: string }
  | { type: 'message-end'; threadId: string; message: MessageDto }
  | { type: 'turn-end'; threadId: string; turnId: string; status: 'complete' | 'error' | 'cancelled' }
  | { type: 'turn-error'; threadId: string; turnId?: string; messageId?: string; error: ErrorBody }
  | { type: 'summary-updated'; threadId: string; revision: number; coveredThroughSeq: number; tokens: number };

export type ThreadEventType = ThreadEvent['type'];
