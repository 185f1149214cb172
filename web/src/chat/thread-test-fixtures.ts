import type { MessageDto, ThreadDto } from '../../../src/shared/api';

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

/** Thread t1 for the web app's state tests: summary memory, default settings, no fork. */
export function testThread(overrides: Partial<ThreadDto> = {}): ThreadDto {
  return {
    id: 't1',
    title: 'A thread',
    createdAt: '',
    updatedAt: '',
    lastActivityAt: '',
    memoryMode: 'summary',
    contextStartSeq: 1,
    settings: { trigger: null, keep: null, summaryPrompt: null, recallTokens: null, recallScope: null },
    memoryRebuilding: false,
    forkedFrom: null,
    ...overrides,
  };
}
