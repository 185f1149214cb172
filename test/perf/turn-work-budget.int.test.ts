import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ThreadDetailDto, ThreadDto } from '../../src/shared/api';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { FIGURES, installWorkCounter, type CountedWork, type WorkFigures } from './count-work';
import type { WorkBudgetStubRequest } from './work-budget-stub';

/**
 * The work budget of a turn: each scenario's turn, run through the whole app on the test Postgres and Redis, may
 * send at most so many statements and Redis commands, ask the tokenizer so often and parse so much JSON: figures
 * that do not depend on the machine, so a feature that adds work to every turn fails here, not weeks later in a
 * benchmark. The budgets are in turn-work-budget.json, next to this file. After a deliberate change:
 * `UPDATE_WORK_BUDGET=1 npx vitest run --project integration test/perf/turn-work-budget.int.test.ts` rewrites it
 * with today's figures; commit it with the reason.
 *
 * Deterministic by construction: a `serve` process (no BullMQ workers, so no stalled checks or blocking polls, and
 * no fold or delayed idle fold runs), the sweeper stopped, a lease long enough never to be renewed during a turn,
 * the model stub in a child process (its parsing and token counting are not the server's) answering one word (one
 * streamed delta), and every count taken between two quiet points (no turn draining, nothing in flight). A pass of
 * the same scenarios first warms the caches, prepared statements and Lua scripts; two counted passes must agree.
 */
const BUDGET_FILE = path.join(import.meta.dirname, 'turn-work-budget.json');
const UPDATE = process.env.UPDATE_WORK_BUDGET === '1';
const UPDATE_COMMAND =
  'UPDATE_WORK_BUDGET=1 npx vitest run --project integration test/perf/turn-work-budget.int.test.ts';
/**
 * `WORK_BUDGET_ENV="RECALL_GATE=off RECALL_SCOPE=thread"`: the app's settings for a measurement (what a feature
 * costs per turn, bench/README.md); the figures are printed and not held to the budget, which is for the defaults.
 */
const SETTINGS: Record<string, string> = Object.fromEntries(
  (process.env.WORK_BUDGET_ENV ?? '')
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
const MEASURING = Object.keys(SETTINGS).length > 0;

/** Long messages of the fold scenario: the turn after FOLD_AFTER of them crosses SUMMARY_TRIGGER. */
const FOLD_AFTER = 6;
const longNote = (index: number) =>
  `Note ${index}: CODE-${100 + index}. ${'We keep talking about the project plan and its details. '.repeat(20)}`;

const SCENARIOS = ['first-turn', 'plain', 'recall', 'tool', 'fold', 'v1-first', 'v1-continued'] as const;
type Scenario = (typeof SCENARIOS)[number];
type Pass = Record<Scenario, CountedWork>;

interface BudgetFile {
  note: string;
  turns: Record<Scenario, CountedWork>;
}

describe('the work budget of a turn', () => {
  let stub: ChildProcess;
  let app: TestApp;
  let counter: ReturnType<typeof installWorkCounter>;

  const stubRequests = (): Promise<WorkBudgetStubRequest[]> =>
    new Promise((resolve) => {
      stub.once('message', (message: { requests: WorkBudgetStubRequest[] }) => resolve(message.requests));
      stub.send({ type: 'requests' });
    });

  beforeAll(async () => {
    stub = fork(path.join(import.meta.dirname, 'work-budget-stub.ts'), [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const stubUrl = await new Promise<string>((resolve, reject) => {
      stub.once('message', (message: { url: string }) => resolve(message.url));
      stub.once('exit', (code) => reject(new Error(`the stub process exited (${code})`)));
    });
    app = await startTestApp({
      mode: 'serve',
      env: {
        OPENAI_BASE_URL: stubUrl,
        OPENAI_API_KEY: 'work-budget-key',
        CHAT_MODEL: 'gpt-4o-mini',
        SUMMARY_TRIGGER: 'tokens=1500',
        SUMMARY_KEEP: 'messages=4',
        ...SETTINGS,
      },
      // Nothing on a timer during a count: no sweep, no lease renewal.
      tuning: { sweepIntervalMs: 3_600_000, leaseTtlMs: 3_600_000 },
    });
    await app.application.sweeper.stop();
    counter = installWorkCounter();
  });
  afterAll(async () => {
    counter?.uninstall();
    await app?.stop();
    stub?.send({ type: 'exit' });
  });

  /** Until no turn drains and nothing is in flight, and it stays so for a while. */
  async function settle(): Promise<void> {
    const { runner } = app.application;
    const idle = () => runner.drainingCount === 0 && counter.inFlight() === 0;
    for (;;) {
      await waitFor(idle, { timeoutMs: 30_000, what: 'the app to go quiet' });
      const before = counter.total();
      await sleep(150);
      if (idle() && counter.total() === before) return;
    }
  }

  /** The work of one request and of what it set off, from a quiet point to the next. */
  async function measure(
    request: () => Promise<Response>,
  ): Promise<{ work: CountedWork; status: number; text: string }> {
    await settle();
    counter.start();
    try {
      const response = await request();
      const text = await response.text();
      await settle();
      return { work: counter.stop(), status: response.status, text };
    } catch (error) {
      counter.stop();
      throw error;
    }
  }

  /**
   * One pass of every scenario, as a new guest; returns each scenario's counted work. Its texts open with `label`
   * (of one length in every pass), so each pass has new texts to count, as new messages do.
   */
  async function pass(label: string): Promise<Pass> {
    const { token } = await app.guest();
    const api = (pathName: string, json?: unknown) =>
      app.api(pathName, {
        method: json === undefined ? 'GET' : 'POST',
        token,
        ...(json === undefined ? {} : { json }),
      });
    const createThread = async (title: string) => (await (await api('/api/threads', { title })).json()) as ThreadDto;
    const send = async (threadId: string, content: string) => {
      const sent = await measure(() => api(`/api/threads/${threadId}/messages`, { content: `${label} ${content}` }));
      expect(sent.status, sent.text).toBe(201);
      return sent.work;
    };
    const foldPending = async (threadId: string) =>
      ((await (await api(`/api/threads/${threadId}`)).json()) as ThreadDetailDto).context.foldPending;
    const work: Partial<Pass> = {};

    const papers = await createThread('Travel papers');
    work['first-turn'] = await send(papers.id, 'My passport number is C4R55T901, please keep it in mind.');
    work.plain = await send(papers.id, 'Thanks, that is all for now.');

    // Cross-thread recall: another chat of the same user brings back the passport number.
    const day = await createThread('A new day');
    await send(day.id, 'Hello there, a new day begins.');
    const before = (await stubRequests()).length;
    work.recall = await send(day.id, 'What is my passport number?');
    // (A measurement with recall off or scoped to the thread has none.)
    if (!MEASURING) expect((await stubRequests()).slice(before).some((request) => request.recall)).toBe(true);

    // A tool call: the model calls search_transcript, the result goes back to it.
    const beforeTool = (await stubRequests()).length;
    work.tool = await send(papers.id, 'Search: passport');
    expect((await stubRequests()).slice(beforeTool).some((request) => request.toolResult)).toBe(true);

    // The turn whose context crosses the summary trigger: it enqueues the fold (a worker would run it).
    const long = await createThread('Long');
    for (let index = 1; index <= FOLD_AFTER; index += 1) await send(long.id, longNote(index));
    // (A measurement whose packs are larger, recall ungated, may cross it a turn earlier.)
    if (!MEASURING) expect(await foldPending(long.id)).toBe(false);
    work.fold = await send(long.id, longNote(FOLD_AFTER + 1));
    expect(await foldPending(long.id)).toBe(true);

    // The OpenAI-compatible front door: a new conversation, then its next turn (matched to the same thread).
    const v1 = async (messages: { role: string; content: string }[]) => {
      const completed = await measure(() =>
        app.api('/v1/chat/completions', {
          method: 'POST',
          token,
          json: { model: 'gpt-4o-mini', messages, stream: true },
        }),
      );
      expect(completed.status, completed.text).toBe(200);
      expect(completed.text).toContain('Noted.');
      return completed.work;
    };
    const opening = { role: 'user', content: `${label} Hello from an API client.` };
    work['v1-first'] = await v1([opening]);
    work['v1-continued'] = await v1([
      opening,
      { role: 'assistant', content: 'Noted.' },
      { role: 'user', content: `${label} And one more thing.` },
    ]);
    return work as Pass;
  }

  it('stays within the committed figures per turn: statements, Redis commands, tokenizer calls, JSON parsed', async () => {
    await pass('[w]'); // warms caches, prepared statements, Lua scripts, pooled connections
    const first = await pass('[1]');
    const second = await pass('[2]');

    // Two identical passes must count the same, or a budget would be a coin toss.
    const unstable = SCENARIOS.flatMap((scenario) =>
      FIGURES.filter((figure) => first[scenario].figures[figure] !== second[scenario].figures[figure]).map(
        (figure) =>
          `${scenario}: ${figure} ${first[scenario].figures[figure]} then ${second[scenario].figures[figure]}` +
          explain(first[scenario], second[scenario], figure),
      ),
    );
    expect(unstable, 'figures that differ between two identical passes (not deterministic)').toEqual([]);

    const measured = second;
    console.info(`work per turn${MEASURING ? ` with ${JSON.stringify(SETTINGS)}` : ''}:\n${table(measured)}`);
    if (MEASURING) {
      expect(UPDATE, 'the budget holds the default settings: UPDATE_WORK_BUDGET with WORK_BUDGET_ENV').toBe(false);
      return;
    }
    if (UPDATE) {
      const file: BudgetFile = {
        note: `The most work each turn may do (test/perf/turn-work-budget.int.test.ts); rewritten by ${UPDATE_COMMAND}. The statements and commands only explain a failure.`,
        turns: measured,
      };
      writeFileSync(BUDGET_FILE, `${JSON.stringify(file, null, 2)}\n`);
      console.info(`work budget rewritten: ${BUDGET_FILE}`);
      return;
    }
    const budget = JSON.parse(readFileSync(BUDGET_FILE, 'utf8')) as BudgetFile;
    const over: string[] = [];
    const under: string[] = [];
    for (const scenario of SCENARIOS) {
      const allowed = budget.turns[scenario];
      for (const figure of FIGURES) {
        const value = measured[scenario].figures[figure];
        const limit = allowed?.figures[figure];
        if (limit === undefined || value > limit)
          over.push(
            `${scenario}: ${figure} = ${value}, budget ${limit ?? 'none'}` +
              (allowed ? explain(allowed, measured[scenario], figure) : ''),
          );
        else if (value < limit) under.push(`${scenario}: ${figure} = ${value} < ${limit}`);
      }
    }
    if (under.length > 0) console.info(`below the work budget (lower it with ${UPDATE_COMMAND}):\n${under.join('\n')}`);
    expect(
      over,
      `over the per-turn work budget (${BUDGET_FILE}). Remove the extra work, or, if it is deliberate, raise the budget: ${UPDATE_COMMAND} and commit the file with the reason`,
    ).toEqual([]);
  }, 600_000);
});

/** What changed between two counts of a figure: the statements or commands whose counts differ. */
function explain(was: CountedWork, now: CountedWork, figure: keyof WorkFigures): string {
  const sources = figure.startsWith('sql')
    ? ([was.statements, now.statements] as const)
    : figure === 'redisCommands'
      ? ([was.commands, now.commands] as const)
      : null;
  if (!sources) return '';
  const [before, after] = sources;
  const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((key) => (before[key] ?? 0) !== (after[key] ?? 0))
    .map((key) => `\n    ${before[key] ?? 0} -> ${after[key] ?? 0}  ${key}`);
  return changed.join('');
}

function table(pass: Pass): string {
  const header = ['scenario'.padEnd(14), ...FIGURES.map((figure) => figure.padStart(18))].join('');
  const rows = SCENARIOS.map((scenario) =>
    [scenario.padEnd(14), ...FIGURES.map((figure) => String(pass[scenario].figures[figure]).padStart(18))].join(''),
  );
  return [header, ...rows].join('\n');
}
