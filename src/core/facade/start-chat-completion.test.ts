import { describe, expect, it } from 'vitest';
import type { Thread, TranscriptMessage } from '../domain';
import type { ClientMessage } from './client-view';
import type { ConversationBranch } from './facade-ports';
import { candidatesOf, MAX_BRANCHES_COMPARED, type ChatCompletionDeps } from './start-chat-completion';

/** A transcript of user/assistant pairs: `turn i: <text>` and `answer i on <branch>`. */
function transcript(threadId: string, branch: string, turns: number): TranscriptMessage[] {
  const messages: TranscriptMessage[] = [];
  for (let turn = 1; turn <= turns; turn += 1) {
    for (const [role, content] of [
      ['user', `turn ${turn}: ${turn === turns ? branch : 'shared'}`],
      ['assistant', `answer ${turn} on ${turn === turns ? branch : 'shared'}`],
    ] as const) {
      const seq = messages.length + 1;
      messages.push({
        id: `${threadId}-m${seq}`,
        threadId,
        seq,
        role,
        content,
        toolCalls: null,
        toolCallId: null,
        status: 'complete',
        error: null,
        tokens: 3,
        clientMessageId: null,
        turnId: null,
        toolRunId: null,
        pinned: false,
        superseded: false,
        deleted: false,
        createdAt: new Date(0),
        updatedAt: new Date(0),
        completedAt: new Date(0),
      } as TranscriptMessage);
    }
  }
  return messages;
}

/** A conversation of `count` branches of a 200-turn chat that differ in their last turn; counts the transcripts read. */
function conversation(count: number) {
  const transcripts = new Map<string, TranscriptMessage[]>();
  const branches: ConversationBranch[] = [];
  for (let index = 0; index < count; index += 1) {
    const threadId = `thread-${index}`;
    const messages = transcript(threadId, `branch ${index}`, 200);
    transcripts.set(threadId, messages);
    branches.push({ threadId, lastTextTail: messages.at(-1)!.content.slice(-256) });
  }
  const reads: string[] = [];
  const deps = {
    conversations: { threadsOf: async () => branches },
    threads: { findThread: async (id: string) => ({ id, lastSeq: transcripts.get(id)!.length }) as Thread },
    fork: {
      memory: {
        listMessagesBySeq: async ({ threadId }: { threadId: string }) => {
          reads.push(threadId);
          return transcripts.get(threadId)!;
        },
      },
    },
    serverToolNames: () => new Set<string>(),
  } as unknown as ChatCompletionDeps;
  const historyOf = (index: number): ClientMessage[] =>
    transcripts
      .get(`thread-${index}`)!
      .map((message) =>
        message.role === 'user'
          ? { role: 'user', content: message.content }
          : { role: 'assistant', content: message.content, toolCalls: [] },
      );
  return { deps, reads, historyOf };
}

const request = (messages: ClientMessage[]) => ({
  userId: 'user-1',
  conversation: { key: 'id:chat', explicit: true },
  messages,
});

describe('comparing a history with the branches of its conversation', () => {
  it('goes on in the branch the history ends in, however old, reading that one transcript only', async () => {
    const { deps, reads, historyOf } = conversation(30);
    // Branch 27 is among the least recently active (listed late); the history continues it.
    const candidates = await candidatesOf(request([...historyOf(27), { role: 'user', content: 'next' }]), deps);
    expect(reads).toEqual(['thread-27']);
    expect(candidates.map((candidate) => [candidate.thread.id, candidate.plan.kind])).toEqual([['thread-27', 'send']]);
  });

  it('reads at most MAX_BRANCHES_COMPARED transcripts when no branch takes the whole history (an edit)', async () => {
    const { deps, reads, historyOf } = conversation(30);
    const edited = [...historyOf(3).slice(0, -2), { role: 'user' as const, content: 'turn 200: edited' }];
    const candidates = await candidatesOf(request(edited), deps);
    expect(reads).toHaveLength(MAX_BRANCHES_COMPARED);
    expect(candidates.every((candidate) => candidate.plan.kind === 'edit' && candidate.plan.matched === 398)).toBe(
      true,
    );
  });
});
