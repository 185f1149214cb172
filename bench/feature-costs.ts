/**
 * What each pack-path feature costs a turn: `npm run bench:features [-- rounds turns]` starts one app per setting
 * (all of them in this process, on one embedded Postgres and Redis, each with its in-process stub answering
 * instantly and counting no tokens), gives each the same user history (six chats with a few messages each, saved
 * memories), then runs `turns` turns one at a time on each app in turn, `rounds` times with the order rotated, and
 * prints per setting the server's CPU per turn (this process' CPU over the batch ÷ turns; median of the rounds), the
 * Postgres server's CPU per turn (its processes' times in /proc: where the recall, gate and memory subqueries run) and
 * the pre-model p50 (request arriving -> model request at the stub). The settings are interleaved in one process so
 * they all see the same load; on a busy shared machine the rounds still spread widely (each round is printed).
 */
import { closeConnections, requestJson } from './support/sse-client';
import { startBenchStack, type BenchStack } from './support/bench-stack';
import { postgresCpuMs } from './support/postgres-cpu';
import { startServices, stopOnSignals, type Services } from './support/stack';
import { distribution, round } from './support/stats';

const rounds = Number(process.argv[2] ?? 6);
const turnsPerBatch = Number(process.argv[3] ?? 10);

const SETTINGS: { name: string; env: Record<string, string> }[] = [
  { name: 'defaults (recall across chats, gate, sticky, saved memories)', env: {} },
  { name: 'RECALL_SCOPE=thread (recall in the chat only)', env: { RECALL_SCOPE: 'thread' } },
  { name: 'RECALL_GATE=off', env: { RECALL_GATE: 'off' } },
  { name: 'RECALL_STICKY=off (no held recall notes)', env: { RECALL_STICKY: 'off' } },
  { name: 'USER_MEMORY_TOKENS=0 (no saved memories in the pack)', env: { USER_MEMORY_TOKENS: '0' } },
  { name: 'RECALL_TOKENS=0 (no auto-recall)', env: { RECALL_TOKENS: '0' } },
  { name: 'no auto-recall, no saved memories', env: { RECALL_TOKENS: '0', USER_MEMORY_TOKENS: '0' } },
];

/** The user's history: chats on several subjects, so recall has candidates in other chats and in this one. */
const HISTORY = [
  ['Travel papers', 'My passport number is C4R55T901 and it expires in March.', 'The visa appointment is on Tuesday.'],
  ['Project plan', 'The project plan has three milestones: design, build and launch.', 'Launch is planned for June.'],
  ['Garden', 'I planted tomatoes and basil along the south fence.', 'The basil needs water every other day.'],
  ['Budget', 'The monthly budget for groceries is 400 euros.', 'Rent went up to 1,150 euros this year.'],
  ['Reading', 'I am reading a history of the Roman roads.', 'The chapter on milestones was the best part.'],
  ['Health', 'My dentist appointment moved to the 14th.', 'I should book the eye test before the trip.'],
];
const QUESTIONS = [
  'How is the project plan going?',
  'When does my passport expire?',
  'What should I water this week?',
  'How much is the grocery budget?',
  'Remind me what I am reading.',
  'Any appointments coming up before the trip?',
  'Tell me something new about the launch.',
  'What did we say about milestones?',
];

interface Lane {
  name: string;
  stack: BenchStack;
  token: string;
  threadId: string;
  cpu: number[];
  postgresCpu: number[];
  pre: number[];
  sent: number;
}

async function post(stack: BenchStack, token: string, path: string, body: unknown): Promise<unknown> {
  const { status, body: answer } = await requestJson<unknown>({
    baseUrl: stack.app.baseUrl,
    method: 'POST',
    path,
    token,
    body,
  });
  if (status >= 300) throw new Error(`${path}: HTTP ${status} ${JSON.stringify(answer)}`);
  return answer;
}

async function prepare(stack: BenchStack, name: string): Promise<Lane> {
  const token = await stack.probe.guest();
  for (const [title, ...messages] of HISTORY) {
    const threadId = await stack.probe.thread(token, title);
    for (const text of messages) await stack.probe.turn({ token, threadId, text });
  }
  for (const text of ['I prefer short answers.', 'I live in Lyon.', 'My daughter is called Ada.'])
    await post(stack, token, '/api/memory', { text });
  const threadId = await stack.probe.thread(token, 'Today');
  return { name, stack, token, threadId, cpu: [], postgresCpu: [], pre: [], sent: 0 };
}

async function batch(lane: Lane, services: Services): Promise<void> {
  // A keep-alive connection idle while the other settings ran may be closing on the server's side (ECONNRESET).
  closeConnections();
  const postgresBefore = postgresCpuMs(services.postgres.port);
  const before = process.cpuUsage();
  for (let turn = 0; turn < turnsPerBatch; turn += 1) {
    const text = QUESTIONS[lane.sent % QUESTIONS.length] ?? '';
    lane.sent += 1;
    const sample = await lane.stack.probe.turn({ token: lane.token, threadId: lane.threadId, text });
    lane.pre.push(sample.pre);
  }
  const cpu = process.cpuUsage(before);
  lane.cpu.push((cpu.user + cpu.system) / 1000 / turnsPerBatch);
  const postgresAfter = postgresCpuMs(services.postgres.port);
  if (postgresBefore !== null && postgresAfter !== null)
    lane.postgresCpu.push((postgresAfter - postgresBefore) / turnsPerBatch);
}

const services = await startServices();
const removeHandlers = stopOnSignals(
  () => services.stop(),
  (message) => process.stderr.write(`${message}\n`),
);
const stacks: BenchStack[] = [];
try {
  const lanes: Lane[] = [];
  for (const setting of SETTINGS) {
    const stack = await startBenchStack(services, { env: setting.env, stub: { countPromptTokens: false } });
    stacks.push(stack);
    lanes.push(await prepare(stack, setting.name));
  }
  for (const lane of lanes) await batch(lane, services); // warm-up: JIT, prepared statements, pooled connections
  for (const lane of lanes) lane.cpu.length = lane.postgresCpu.length = lane.pre.length = 0;
  for (let index = 0; index < rounds; index += 1) {
    for (let offset = 0; offset < lanes.length; offset += 1) {
      const lane = lanes[(index + offset) % lanes.length];
      if (lane) await batch(lane, services);
    }
    process.stderr.write(`round ${index + 1} of ${rounds} done\n`);
  }
  const baseline = lanes[0];
  const median = (values: number[]) => distribution(values).p50;
  const rows = lanes.map((lane) => {
    const cpu = median(lane.cpu);
    const pre = median(lane.pre);
    const postgres = lane.postgresCpu.length > 0 ? median(lane.postgresCpu) : Number.NaN;
    // What the setting saves against the defaults: the cost of what it turns off.
    const deltaCpu = baseline ? median(baseline.cpu) - cpu : 0;
    const deltaPre = baseline ? median(baseline.pre) - pre : 0;
    const deltaPostgres = baseline && baseline.postgresCpu.length > 0 ? median(baseline.postgresCpu) - postgres : 0;
    return `| ${lane.name} | ${round(cpu)} (${lane.cpu.map((value) => round(value, 1)).join(' / ')}) | ${round(deltaCpu)} | ${round(postgres)} | ${round(deltaPostgres)} | ${round(pre)} | ${round(deltaPre)} |`;
  });
  process.stdout.write(
    `${rounds} rounds of ${turnsPerBatch} turns per setting, 1 in flight, settings interleaved\n\n` +
      '| setting | server CPU per turn, ms: median (each round) | saved vs defaults | Postgres CPU per turn, ms | saved vs defaults | pre-model p50, ms | saved vs defaults |\n' +
      '|---|---|---|---|---|---|---|\n' +
      `${rows.join('\n')}\n`,
  );
} finally {
  for (const stack of stacks) await stack.stop();
  await services.stop();
  removeHandlers();
}
