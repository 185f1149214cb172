// In-memory fakes for the summary use cases' unit tests (src/core/summary/*.test.ts, the turn runner's).
import { budgetOf, createTokenCounter, getModelProfile, type ContextEntry } from '../../src/core/context';
import type { ContextSettings } from '../../src/core/thread-context/context-settings';
import type { ThreadContext } from '../../src/core/domain/types';
import type { ChatResult, SummaryCommit, SummarizerPort } from '../../src/core/ports';
import type { ThreadEvent } from '../../src/shared/events';

export function testSettings(): ContextSettings {
  const profile = getModelProfile('gpt-4o-mini');
  return {
    profile,
    budget: budgetOf(profile),
    trigger: { conditions: [{ kind: 'messages', value: 4 }] },
    keep: { kind: 'messages', value: 2 },
    summaryMaxTokens: 300,
    summarizerInputMaxTokens: 2000,
    pinnedMaxTokens: 1000,
    toolResultInlineTokens: 800,
    systemPrefix: 'system',
    compat: 'openai',
    counter: createTokenCounter(profile.encoding),
    recallTokens: 0,
    userMemoryTokens: 0,
    recallScope: 'thread',
  };
}

export const silentLog = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** One thread in memory: the transcript as entries, the summary state, the window and a CAS version. */
export function memoryThread(options: {
  transcript: ContextEntry[];
  coveredThroughSeq: number;
  summaryText: string;
  revision: number;
  summaryPrompt?: string;
}) {
  const state = { ...options, version: 7, contextStartSeq: 1, segmentEnds: [] as number[] };
  const commits: SummaryCommit[] = [];
  const events: ThreadEvent[] = [];
  /** Runs once before the next commit is checked (simulates a concurrent fold). */
  let beforeCommit: (() => void) | null = null;
  const context = (): ThreadContext => ({
    thread: {
      id: 'thread-1',
      ownerId: 'user-1',
      title: 't',
      createdAt: new Date(0),
      updatedAt: new Date(0),
      lastActivityAt: new Date(0),
      lastSeq: state.transcript.length,
      contextStartSeq: state.contextStartSeq,
      memoryMode: 'summary',
      settings: state.summaryPrompt ? { summaryPrompt: state.summaryPrompt } : {},
      version: state.version,
      lastFoldAt: null,
      lastFoldError: null,
      summaryEncoding: null,
      forkedFrom: null,
      summary:
        state.revision > 0
          ? {
              text: state.summaryText,
              tokens: 10,
              coveredThroughSeq: state.coveredThroughSeq,
              revision: state.revision,
              segmentEnds: state.segmentEnds,
            }
          : null,
    },
    window: state.transcript.filter((entry) => entry.seq > state.coveredThroughSeq),
    pinned: [],
  });
  return {
    state,
    commits,
    events,
    setBeforeCommit(hook: () => void) {
      beforeCommit = hook;
    },
    turns: { loadContext: async () => context() },
    transcript: {
      listSummarizableEntries: async ({ fromSeq, throughSeq }: { fromSeq: number; throughSeq: number }) =>
        state.transcript.filter((entry) => entry.seq >= fromSeq && entry.seq <= throughSeq),
    },
    summaries: {
      async commit(commit: SummaryCommit) {
        const hook = beforeCommit;
        beforeCommit = null;
        hook?.();
        if (commit.expectedVersion !== state.version) return { committed: false as const };
        commits.push(commit);
        state.version += 1;
        state.revision += 1;
        state.summaryText = commit.text;
        state.segmentEnds = commit.segmentEnds;
        state.coveredThroughSeq = commit.throughSeq;
        return { committed: true as const, revision: state.revision };
      },
    },
    eventBus: { publish: (event: ThreadEvent) => events.push(event), subscribe: () => () => undefined },
  };
}

/** A summarizer that lists the CODE-n identifiers it was given (the previous summary's included). */
export function codeSummarizer(): SummarizerPort & { prompts: string[] } {
  const prompts: string[] = [];
  return {
    model: 'fake-summarizer',
    prompts,
    async summarize({ messages }): Promise<ChatResult> {
      const text = messages.map((message) => message.content).join('\n');
      prompts.push(text);
      const codes = [...new Set(text.match(/CODE-\d+/g) ?? [])];
      return {
        text: `Summary keeps ${codes.join(', ') || 'nothing'}.`,
        toolCalls: [],
        usage: { promptTokens: 100, completionTokens: 10 },
      };
    },
  };
}

export function transcriptOf(count: number): ContextEntry[] {
  return Array.from({ length: count }, (_, index) => ({
    seq: index + 1,
    role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: `message ${index + 1} mentions CODE-${index + 1}`,
    tokens: 12,
  }));
}
