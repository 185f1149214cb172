import pg from 'pg';
import { createTokenCounter } from '../src/core/context';
import { DEFAULT_SYSTEM_PROMPT } from '../src/app/context-settings-from-env';
import type { ThreadEvent } from '../src/shared/events';
import { startBenchStack } from './support/bench-stack';
import { CONVERSATION_POLICY, scriptedMessage, scriptedResponder } from './support/script';
import type { Services } from './support/stack';

export interface ConversationTurn {
  turn: number;
  /** Client: send -> turn-end. */
  latencyMs: number;
  /** What the model received (the stub's count). */
  promptTokens: number;
  /** What sending the whole transcript would have cost. */
  fullHistoryTokens: number;
  /** This turn fired a fold: it asked for one while none was pending (later asks are deduplicated no-ops). */
  firedFold: boolean;
}

export interface ConversationRun {
  turns: ConversationTurn[];
  /** End of the turn that fired the fold -> `summary-updated`, one per committed fold. */
  foldLatencyMs: number[];
  summaryCalls: number;
  summaryPromptTokens: number[];
}

/**
 * Our product through the scripted conversation over REST + SSE: the whole app, the fold worker in the same
 * process, the stub as chat model and summarizer (`summaryDelayMs` before the summary's first byte).
 */
export async function runOurConversation(services: Services, options: { turns: number; summaryDelayMs: number; waitForFolds?: boolean }): Promise<ConversationRun> {
  const stack = await startBenchStack(services, {
    responder: scriptedResponder({ summaryDelayMs: options.summaryDelayMs }),
    env: {
      SUMMARY_TRIGGER: `tokens=${CONVERSATION_POLICY.triggerTokens}`, SUMMARY_KEEP: `messages=${CONVERSATION_POLICY.keepMessages}`,
      SUMMARY_MAX_TOKENS: String(CONVERSATION_POLICY.summaryMaxTokens),
    },
  });
  try {
    const { application } = stack.app;
    const token = await stack.probe.guest();
    const threadId = await stack.probe.thread(token, 'scripted');
    // Fold timing from inside the process: when the runner asks for a fold, and when the summary is committed.
    const enqueues: number[] = [];
    let foldPending = false;
    let firedAt = -1;
    const enqueue = application.folds.enqueueFold.bind(application.folds);
    application.folds.enqueueFold = (id, reason, force) => {
      if (id === threadId) {
        enqueues.push(performance.now());
        if (!foldPending) firedAt = enqueues.length;
        foldPending = true;
      }
      return enqueue(id, reason, force);
    };
    const foldLatencyMs: number[] = [];
    let seen = 0;
    let onSummary: (() => void) | null = null;
    const unsubscribe = application.deps.events.subscribe(threadId, (event: ThreadEvent) => {
      if (event.type !== 'summary-updated') return;
      onSummary?.();
      // The first ask since the previous commit is the turn that fired this fold (later asks were deduplicated).
      const firstAsk = enqueues[seen];
      if (firstAsk !== undefined) foldLatencyMs.push(performance.now() - firstAsk);
      seen = enqueues.length;
      foldPending = false;
    });
    const turns: ConversationTurn[] = [];
    for (let turn = 1; turn <= options.turns; turn += 1) {
      const before = firedAt;
      const summarized = new Promise<void>((resolve) => { onSummary = resolve; });
      const sample = await stack.probe.turn({ token, threadId, text: scriptedMessage(turn) });
      // The enqueue runs in the same tick as turn-end; give it a turn of the event loop to be recorded.
      await new Promise((resolve) => setImmediate(resolve));
      const firedFold = firedAt !== before;
      // Measuring fold latency alone: the next message waits until the fold this turn fired is committed.
      if (firedFold && options.waitForFolds) await Promise.race([summarized, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      turns.push({ turn, latencyMs: sample.total, promptTokens: sample.promptTokens, fullHistoryTokens: 0, firedFold });
    }
    unsubscribe();
    await fillFullHistoryTokens(stack.app.databaseUrl, threadId, turns);
    const summaries = stack.stub.requests.filter((request) => request.kind === 'summary');
    return { turns, foldLatencyMs, summaryCalls: summaries.length, summaryPromptTokens: summaries.map((request) => request.promptTokens) };
  } finally {
    await stack.stop();
  }
}

/** Full-history cost of each turn: the system prompt, every stored message through the turn's user message, the reply priming. */
async function fillFullHistoryTokens(databaseUrl: string, threadId: string, turns: ConversationTurn[]): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ seq: number; role: string; tokens: number }>(
      'SELECT seq, role, tokens FROM messages WHERE thread_id = $1 AND seq IS NOT NULL ORDER BY seq', [threadId]);
    const counter = createTokenCounter('o200k_base');
    let running = counter.countMessage({ role: 'system', content: DEFAULT_SYSTEM_PROMPT }) + 3;
    let userTurn = 0;
    for (const row of rows) {
      running += row.tokens;
      if (row.role === 'user') {
        const turn = turns[userTurn];
        if (turn) turn.fullHistoryTokens = running;
        userTurn += 1;
      }
    }
  } finally {
    await client.end();
  }
}
