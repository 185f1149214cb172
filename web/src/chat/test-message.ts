import type { MessageDto } from '../../../src/shared/api';

let counter = 0;

/** A message of thread t1 for the web app's state tests: each call the next seq and a second later. */
export function testMessage(overrides: Partial<MessageDto>): MessageDto {
  counter += 1;
  return {
    id: `m${counter}`,
    threadId: 't1',
    seq: counter,
    role: 'assistant',
    content: '',
    toolCalls: null,
    toolCallId: null,
    status: 'complete',
    error: null,
    tokens: 1,
    clientMessageId: null,
    turnId: null,
    toolRunId: null,
    pinned: false,
    superseded: false,
    deleted: false,
    createdAt: new Date(2026, 0, 1, 0, 0, counter).toISOString(),
    updatedAt: '',
    completedAt: null,
    ...overrides,
  };
}
