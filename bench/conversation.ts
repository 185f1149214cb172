import { fork } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { createTokenCounter } from '../src/core/context';
import { DEFAULT_SYSTEM_PROMPT } from '../src/app/context-settings-from-env';
import type { ThreadEvent } from '../src/shared/events';
import type { ChildStubRecord } from './stub-process';
import type { Figure } from './support/report';
import { CONVERSATION_POLICY, scriptedMessage } from './support/script';
import { requestJson, sendStreaming } from './support/sse-client';
import { startApp, type Services } from './support/stack';
import { distribution, round } from './support/stats';

export interface ConversationTurn {
  turn: number;
  /** Client: send -> turn-end. */
  latencyMs: number;
  /** What the model received (the stub's count). */
  promptTokens: number;
  /** What sending the whole transcript would have cost. */
  fullHistoryTokens: number;
  /** This turn fired a fold: its end asked for one while none was pending (later asks are deduplicated no-ops). */
  firedFold: boolean;
}

export interface ConversationRun {
  turns: ConversationTurn[];
  /** End of the turn that fired the fold -> `summary-updated`, one per committed fold. */
  foldLatencyMs: number[];
  /** This process' CPU time (user + system) over the same span: the fold's work, what a loaded machine stretches. */
  foldCpuMs: number[];
  summaryCalls: number;
  summaryPromptTokens: number[];
}

interface ChildStub {
  url: string;
  records(): Promise<ChildStubRecord[]>;
  stop(): void;
}

/** Forks bench/stub-process.ts (the model stub with the scripted answers) and waits for it to listen. */
async function startChildStub(summaryDelayMs: number): Promise<ChildStub> {
  const child = fork(path.join(import.meta.dirname, 'stub-process.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_STUB_SUMMARY_DELAY_MS: String(summaryDelayMs) },
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message: { type: string; url: string }) => resolve(message.url));
    child.once('exit', (code) => reject(new Error(`the stub process exited with ${code}`)));
  });
  return {
    url,
    records: () =>
      new Promise((resolve) => {
        child.once('message', (message: { type: 'records'; records: ChildStubRecord[] }) => resolve(message.records));
        child.send({ type: 'records' });
      }),
    stop: () => child.send({ type: 'exit' }),
  };
}

/** Resolves once the app's turn runner has finished its turns (their ends, the fold decision after each). */
async function runnerIdle(activeCount: () => number): Promise<void> {
  while (activeCount() > 0) await new Promise((resolve) => setTimeout(resolve, 1));
}

/**
 * Our product through the scripted conversation over REST + SSE: the whole app and its fold worker in this process,
 * the model stub (chat model and summarizer, `summaryDelayMs` before the summary's first byte) in a child process, as
 * a model server is: its parsing and token counting are not the server's work. After each turn the client waits
 * until the server has finished it (the fold decision runs just after `turn-end`), so a fold is counted against the
 * turn that fired it and the next message never races the decision.
 */
export async function runOurConversation(
  services: Services,
  options: { turns: number; summaryDelayMs: number; waitForFolds?: boolean },
): Promise<ConversationRun> {
  const stub = await startChildStub(options.summaryDelayMs);
  try {
    const app = await startApp(services, {
      env: {
        OPENAI_BASE_URL: stub.url,
        OPENAI_API_KEY: 'bench-key',
        CHAT_MODEL: 'gpt-4o-mini',
        SUMMARY_TRIGGER: `tokens=${CONVERSATION_POLICY.triggerTokens}`,
        SUMMARY_KEEP: `messages=${CONVERSATION_POLICY.keepMessages}`,
        SUMMARY_MAX_TOKENS: String(CONVERSATION_POLICY.summaryMaxTokens),
      },
    });
    try {
      return await converse(app, stub, options);
    } finally {
      await app.stop();
    }
  } finally {
    stub.stop();
  }
}

async function converse(
  app: Awaited<ReturnType<typeof startApp>>,
  stub: ChildStub,
  options: { turns: number; waitForFolds?: boolean },
): Promise<ConversationRun> {
  const { application, baseUrl } = app;
  const token = (await requestJson<{ token: string }>({ baseUrl, method: 'POST', path: '/api/auth/guest' })).body.token;
  const threadId = (
    await requestJson<{ id: string }>({
      baseUrl,
      method: 'POST',
      path: '/api/threads',
      token,
      body: { title: 'scripted' },
    })
  ).body.id;
  // Fold timing from inside the process: when the runner asks for a fold, and when the summary is committed.
  let turnsEnded = 0;
  let foldPending = false;
  let askedAt: number | null = null;
  let askedCpu: NodeJS.CpuUsage | null = null;
  const firedBy = new Set<number>();
  const enqueue = application.folds.enqueueFold.bind(application.folds);
  application.folds.enqueueFold = (id, reason, force) => {
    if (id === threadId && !foldPending) {
      // The ask follows the end of the turn that fired it (the runner decides once `turn-end` is published).
      foldPending = true;
      askedAt = performance.now();
      askedCpu = process.cpuUsage();
      firedBy.add(turnsEnded);
    }
    return enqueue(id, reason, force);
  };
  const foldLatencyMs: number[] = [];
  const foldCpuMs: number[] = [];
  let onSummary: (() => void) | null = null;
  const unsubscribe = application.deps.events.subscribe(threadId, (event: ThreadEvent) => {
    if (event.type === 'turn-end') turnsEnded += 1;
    if (event.type !== 'summary-updated') return;
    if (askedAt !== null) foldLatencyMs.push(performance.now() - askedAt);
    if (askedCpu !== null) {
      const used = process.cpuUsage(askedCpu);
      foldCpuMs.push((used.user + used.system) / 1000);
    }
    askedAt = null;
    askedCpu = null;
    foldPending = false;
    onSummary?.();
  });
  const samples: { turn: number; latencyMs: number }[] = [];
  const activeCount = () => application.runner.activeCount;
  for (let turn = 1; turn <= options.turns; turn += 1) {
    const summarized = new Promise<void>((resolve) => {
      onSummary = resolve;
    });
    const streamed = await sendStreaming({
      baseUrl,
      threadId,
      token,
      content: `${scriptedMessage(turn)} [b:t${turn}]`,
      benchId: `t${turn}`,
    });
    const end = streamed.events.find((event) => event.event === 'turn-end');
    const status = (end?.data as { status?: string } | undefined)?.status;
    if (streamed.status !== 200 || !end || status !== 'complete') {
      throw new Error(
        `turn ${turn} did not complete cleanly (HTTP ${streamed.status}, turn ${status ?? 'no turn-end'})`,
      );
    }
    samples.push({ turn, latencyMs: end.at - streamed.sentAt });
    await runnerIdle(activeCount);
    // Measuring fold latency alone: the next message waits until the fold this turn fired is committed.
    if (firedBy.has(turn) && options.waitForFolds)
      await Promise.race([summarized, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  }
  unsubscribe();
  const records = await stub.records();
  const promptTokens = new Map(
    records.filter((record) => record.tag !== null).map((record) => [record.tag, record.promptTokens]),
  );
  const turns: ConversationTurn[] = samples.map(({ turn, latencyMs }) => ({
    turn,
    latencyMs,
    promptTokens: promptTokens.get(`t${turn}`) ?? 0,
    fullHistoryTokens: 0,
    firedFold: firedBy.has(turn),
  }));
  await fillFullHistoryTokens(app.databaseUrl, threadId, turns);
  const summaries = records.filter((record) => record.kind === 'summary');
  return {
    turns,
    foldLatencyMs,
    foldCpuMs,
    summaryCalls: summaries.length,
    summaryPromptTokens: summaries.map((record) => record.promptTokens),
  };
}
/** Full-history cost of each turn: the system prompt, every stored message through the turn's user message, the reply priming. */
async function fillFullHistoryTokens(databaseUrl: string, threadId: string, turns: ConversationTurn[]): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ seq: number; role: string; tokens: number }>(
      'SELECT seq, role, tokens FROM messages WHERE thread_id = $1 AND seq IS NOT NULL ORDER BY seq',
      [threadId],
    );
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

/** Section 4's figures: fold latency (instant summarizer) and fold turns ÷ other turns (slow summarizer). */
export function foldFigures(instant: ConversationRun, slow: ConversationRun, slowSummaryMs: number): Figure[] {
  const section = '4 fold latency';
  const folds = distribution(instant.foldLatencyMs);
  const cpu = distribution(instant.foldCpuMs);
  const latency = (pick: (turn: ConversationTurn, index: number) => boolean) =>
    distribution(slow.turns.filter(pick).map((turn) => turn.latencyMs));
  const foldTurns = latency((turn) => turn.firedFold);
  // The fold's own work (pick-up, context read, prompt, summarizer request) starts as the next turn does.
  const afterFold = (index: number) => slow.turns[index - 1]?.firedFold === true;
  const nextTurns = latency((_, index) => afterFold(index));
  const otherTurns = latency((turn, index) => !turn.firedFold && !afterFold(index));
  return [
    {
      section,
      name: `turn end -> summary-updated p50 (instant summarizer, ${folds.n} folds)`,
      value: round(folds.p50),
      unit: 'ms',
      target: { op: '<=', value: 15 },
    },
    {
      section,
      name: 'turn end -> summary-updated p99',
      value: round(folds.p99),
      unit: 'ms',
      target: { op: '<=', value: 60 },
    },
    {
      section,
      name: "server CPU over the same span p50 / p99 (the fold's own work; moves less with load)",
      value: `${round(cpu.p50)} / ${round(cpu.p99)}`,
      unit: 'ms',
    },
    {
      section,
      name: `turn latency p50, fold turns ÷ other turns (summarizer ${slowSummaryMs / 1000} s; ${foldTurns.n} fold turns)`,
      value: round(foldTurns.p50 / otherTurns.p50),
      unit: '×',
      target: { op: '<=', value: 1.1 },
    },
    {
      section,
      name: `turn latency p50, the turn after a fold turn ÷ other turns (${nextTurns.n} turns)`,
      value: round(nextTurns.p50 / otherTurns.p50),
      unit: '×',
      target: { op: '<=', value: 1.1 },
    },
    {
      section,
      name: 'turn latency p50: fold turns / turns after them / other turns',
      value: `${round(foldTurns.p50)} / ${round(nextTurns.p50)} / ${round(otherTurns.p50)}`,
      unit: 'ms',
    },
  ];
}
