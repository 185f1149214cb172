import type { ErrorBody } from './errors';
import type { MessageDto, ThreadDto, ToolRunDto } from './api';

/** Events the server emits to a thread's subscribers (socket rooms, SSE streams). */
export type ThreadEvent =
  | { type: 'message-created'; threadId: string; message: MessageDto }
  | { type: 'message-start'; threadId: string; message: MessageDto }
  | { type: 'message-delta'; threadId: string; messageId: string; offset: number; delta: string }
  | { type: 'message-end'; threadId: string; message: MessageDto }
  | { type: 'turn-end'; threadId: string; turnId: string; status: 'complete' | 'error' | 'cancelled' }
  | { type: 'turn-error'; threadId: string; turnId?: string; messageId?: string; error: ErrorBody }
  | { type: 'summary-updated'; threadId: string; revision: number; coveredThroughSeq: number; tokens: number }
  | { type: 'message-updated'; threadId: string; message: MessageDto }
  | { type: 'tool-start'; threadId: string; run: ToolRunDto }
  | { type: 'tool-progress'; threadId: string; runId: string; progress: number; note?: string }
  | { type: 'tool-end'; threadId: string; run: ToolRunDto }
  | { type: 'thread-updated'; threadId: string; thread: ThreadDto }
  | { type: 'context-reset'; threadId: string; seq: number };

export type ThreadEventType = ThreadEvent['type'];
