/**
 * `npm run bench`: every benchmark of issue 8 against the real stack this script starts (embedded Postgres and
 * Redis, migrations, the whole app in this process, the OpenAI-compatible stub answering instantly). Prints one
 * table (figure, target, met or missed) and writes the raw results to bench/results/. `BENCH_QUICK=1` runs
 * shorter versions (for trying the harness, not for the README).
 */
import os from 'node:os';
import path from 'node:path';
import { foldFigures, runOurConversation, type ConversationRun } from './conversation';
import { fanOutFigures, measureFanOut } from './fan-out';
import { measureFloor } from './floor';
import { measureHistoryLength } from './history-length';
import { measureFacadeHistory } from './facade-history';
import { machine, renderLines, renderTable, verdict, writeResults, type Figure } from './support/report';
import { startServices } from './support/stack';
import { distribution, mean, round } from './support/stats';
import { memoryFigures } from './memory-figures';
import { FIXED_LOAD_TURNS_PER_SECOND, measureThroughputAndMemory } from './throughput';
import { measureTurnOverhead, overheadFigures } from './turn-overhead';

const quick = process.env.BENCH_QUICK === '1';
const scale = (full: number, short: number) => (quick ? short : full);
const CONVERSATION_TURNS = scale(500, 120);
const SLOW_SUMMARY_MS = 2000;
/** The heap-growth points: runs of this many seconds (bench/memory.ts runs this part alone). */
const MEMORY_RUNS = { memoryRuns: 6, memorySeconds: scale(10, 5) };
/** Sorted first: the server's CPU per turn and per delivered event. */
const CPU_SECTION = '0 server CPU';

function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

function contextFigures(run: ConversationRun): Figure[] {
  const section = '3 context stays flat';
  const window = (from: number, to: number, pick: (turn: ConversationRun['turns'][number]) => number) =>
    mean(run.turns.filter((turn) => turn.turn >= from && turn.turn <= to).map(pick));
  const last = run.turns.at(-1);
  const early = [Math.round(CONVERSATION_TURNS / 10), Math.round(CONVERSATION_TURNS / 5)] as const;
  const late = [Math.round(CONVERSATION_TURNS * 0.8), CONVERSATION_TURNS] as const;
  const packEarly = window(...early, (turn) => turn.promptTokens);
  const packLate = window(...late, (turn) => turn.promptTokens);
  const fullEarly = window(...early, (turn) => turn.fullHistoryTokens);
  const fullLate = window(...late, (turn) => turn.fullHistoryTokens);
  return [
    {
      section,
      name: `mean pack tokens, turns ${late.join('–')} ÷ turns ${early.join('–')}`,
      value: round(packLate / packEarly),
      unit: '×',
      target: { op: '<=', value: 1.15 },
    },
    {
      section,
      name: `transcript growth over the same turns (full history)`,
      value: round(fullLate / fullEarly),
      unit: '×',
    },
    {
      section,
      name: `tokens per turn at turn ${last?.turn ?? 0}: our pack / full history`,
      value: `${last?.promptTokens ?? 0} / ${last?.fullHistoryTokens ?? 0}`,
    },
    {
      section,
      name: `compression factor at turn ${last?.turn ?? 0}`,
      value: round((last?.fullHistoryTokens ?? 0) / (last?.promptTokens ?? 1), 1),
      unit: '×',
    },
    {
      section,
      name: 'mean tokens per call over the conversation: ours / full history',
      value: `${Math.round(mean(run.turns.map((turn) => turn.promptTokens)))} / ${Math.round(mean(run.turns.map((turn) => turn.fullHistoryTokens)))}`,
    },
  ];
}

/**
 * The peer is loaded by a specifier TypeScript does not follow: `langchain`'s types clash with zod-to-openapi's
 * augmentation of zod in one program, so bench/peer.ts is type-checked on its own (bench/tsconfig.peer.json).
 */
async function loadPeer(): Promise<{
  runPeerConversation: (options: { turns: number; summaryDelayMs: number }) => Promise<ConversationRun>;
}> {
  const specifier = './peer';
  return (await import(specifier)) as Awaited<ReturnType<typeof loadPeer>>;
}

function peerFigures(ours: ConversationRun, theirs: ConversationRun): Figure[] {
  const section = '5 peer (LangChain summarizationMiddleware)';
  const figures: Figure[] = [];
  for (const [name, run] of [
    ['ours', ours],
    ['LangChain', theirs],
  ] as const) {
    const all = distribution(run.turns.map((turn) => turn.latencyMs));
    const folds = distribution(run.turns.filter((turn) => turn.firedFold).map((turn) => turn.latencyMs));
    figures.push(
      { section, name: `${name}: turn latency p50 / p99`, value: `${round(all.p50)} / ${round(all.p99)}`, unit: 'ms' },
      {
        section,
        name: `${name}: fold turns p50 / p99 (${folds.n} turns)`,
        value: `${round(folds.p50)} / ${round(folds.p99)}`,
        unit: 'ms',
      },
      {
        section,
        name: `${name}: chat tokens per call (mean / max)`,
        value: `${Math.round(mean(run.turns.map((turn) => turn.promptTokens)))} / ${Math.max(...run.turns.map((turn) => turn.promptTokens))}`,
      },
      {
        section,
        name: `${name}: summarizer calls, tokens per call (mean)`,
        value: `${run.summaryCalls}, ${Math.round(mean(run.summaryPromptTokens))}`,
      },
    );
  }
  const oursFolds = distribution(ours.turns.filter((turn) => turn.firedFold).map((turn) => turn.latencyMs));
  const theirFolds = distribution(theirs.turns.filter((turn) => turn.firedFold).map((turn) => turn.latencyMs));
  figures.push({
    section,
    name: 'fold turn p50: LangChain ÷ ours',
    value: round(theirFolds.p50 / oursFolds.p50, 1),
    unit: '×',
  });
  return figures;
}

async function main(): Promise<void> {
  const started = Date.now();
  log('starting embedded Postgres and Redis');
  const services = await startServices();
  const figures: Figure[] = [];
  const raw: Record<string, unknown> = {};
  try {
    log('floor (raw pg + ioredis)');
    const floorDatabase = await services.createDatabase('floor');
    const floor1 = await measureFloor({
      databaseUrl: floorDatabase,
      redisUrl: services.redis.socketPath,
      iterations: scale(500, 200),
      inFlight: 1,
    });
    const floor16 = await measureFloor({
      databaseUrl: floorDatabase,
      redisUrl: services.redis.socketPath,
      iterations: scale(1600, 400),
      inFlight: 16,
    });
    raw.floor = { inFlight1: floor1, inFlight16: floor16 };
    figures.push({
      section: '0 floor',
      name: 'raw insert + pack read + enqueue, 1 / 16 in flight p50',
      value: `${round(floor1.p50)} / ${round(floor16.p50)}`,
      unit: 'ms',
    });

    // First, while this process holds nothing else: its RSS is then the server's.
    log('throughput: 200 busy threads; memory');
    const { throughput, spreadOverUsers, oneInFlight, fixedLoad, memory } = await measureThroughputAndMemory(services, {
      threads: 200,
      seconds: scale(20, 8),
      oneInFlightSeconds: scale(15, 6),
      seedMessages: 100_000,
      ...MEMORY_RUNS,
    });
    raw.throughput = throughput;
    raw.spreadOverUsers = spreadOverUsers;
    raw.oneInFlight = oneInFlight;
    raw.fixedLoad = fixedLoad;
    raw.memory = memory;
    figures.push(
      {
        section: CPU_SECTION,
        name: 'server CPU per turn (throughput run)',
        value: round(throughput.cpuMsPerTurn),
        unit: 'ms',
        target: { op: '<=', value: 3 },
        note: `${throughput.turns} turns, ${throughput.threads} threads`,
      },
      {
        section: CPU_SECTION,
        name: 'server CPU per turn (1 in flight)',
        value: round(oneInFlight.cpuMsPerTurn),
        unit: 'ms',
        target: { op: '<=', value: 3 },
        note: `${oneInFlight.turns} turns`,
      },
    );
    figures.push(
      {
        section: '6 throughput',
        name: `sustained turns/s, 200 threads busy (${throughput.turns} turns, ${throughput.failures} failed)`,
        value: round(throughput.turnsPerSecond, 1),
        unit: 'turns/s',
        target: { op: '>=', value: 200 },
      },
      {
        section: '6 throughput',
        name: `the same load from 200 users, one busy chat each (${spreadOverUsers.turns} turns, ${spreadOverUsers.failures} failed)`,
        value: round(spreadOverUsers.turnsPerSecond, 1),
        unit: 'turns/s',
        note: `server CPU ${round(spreadOverUsers.cpuMsPerTurn)} ms per turn; no target: the line above is issue 37's`,
      },
      {
        section: '6 throughput',
        name: 'turn latency under that load p50 / p99',
        value: `${round(throughput.latency.p50)} / ${round(throughput.latency.p99)}`,
        unit: 'ms',
      },
      {
        section: '6 throughput',
        name: `server event-loop delay p99 at ${FIXED_LOAD_TURNS_PER_SECOND} turns/s offered (${fixedLoad.turns} turns, ${fixedLoad.failures} failed or not sent; p50 ${round(fixedLoad.eventLoopDelay.p50)}, max ${round(fixedLoad.eventLoopDelay.max)} ms)`,
        value: round(fixedLoad.eventLoopDelay.p99),
        unit: 'ms',
        target: { op: '<=', value: 20 },
      },
      {
        section: '7 memory',
        name: `server RSS: after the run / after ${memory.seededMessages} more stored + a run / after ${memory.storedMessages} more through turns`,
        value: `${Math.round(memory.rssBeforeMb)} / ${Math.round(memory.rssAfterSeedMb)} / ${Math.round(memory.rssAfterMb)}`,
        unit: 'MB',
      },
      ...memoryFigures(memory),
    );
    log('fan-out: 1,000 sockets on one thread');
    const fanOut = await measureFanOut(services, { tabs: scale(1000, 200), chunks: 40 });
    raw.fanOut = fanOut;
    figures.push(...fanOutFigures(fanOut, CPU_SECTION));
    log('turn overhead, 1 in flight');
    const one = await measureTurnOverhead(services, {
      inFlight: 1,
      turnsPerLane: scale(400, 100),
      threadsPerLane: 10,
      warmupPerLane: 40,
    });
    log('turn overhead, 16 in flight');
    const sixteen = await measureTurnOverhead(services, {
      inFlight: 16,
      turnsPerLane: scale(50, 15),
      threadsPerLane: 2,
      warmupPerLane: 5,
    });
    raw.overhead = { one, sixteen };
    figures.push(...overheadFigures(one, floor1), ...overheadFigures(sixteen, floor16));

    log('history length: 10,000 vs 10 messages');
    const history = await measureHistoryLength(services, { messages: 10_000, turns: scale(150, 40), warmup: 10 });
    raw.history = history;
    figures.push(
      {
        section: '2 flat in history length',
        name: 'pre-model p50, 10 / 10,000 messages',
        value: `${round(history.short.p50)} / ${round(history.long.p50)}`,
        unit: 'ms',
      },
      {
        section: '2 flat in history length',
        name: 'pre-model p50, 10,000-message ÷ 10-message thread',
        value: round(history.long.p50 / history.short.p50),
        unit: '×',
        target: { op: '<=', value: 1.2 },
      },
    );

    const facadeLong = scale(1000, 300);
    log(`/v1 history length: ${facadeLong} vs 10 messages`);
    const facade = await measureFacadeHistory(services, {
      longMessages: facadeLong,
      shortMessages: 10,
      turns: scale(60, 20),
      warmup: 4,
    });
    raw.facadeHistory = facade;
    figures.push(
      {
        section: '2 flat in history length',
        name: `/v1 turn p50, ${facade.shortMessages}-message / ${facade.longMessages}-message client history`,
        value: `${round(facade.short.p50)} / ${round(facade.long.p50)}`,
        unit: 'ms',
      },
      {
        section: '2 flat in history length',
        name: `/v1 turn p50, ${facade.longMessages}-message ÷ ${facade.shortMessages}-message client history`,
        value: round(facade.long.p50 / facade.short.p50),
        unit: '×',
        target: { op: '<=', value: 1.2 },
      },
    );

    log(`scripted conversation, ${CONVERSATION_TURNS} turns, instant summarizer`);
    const instant = await runOurConversation(services, {
      turns: CONVERSATION_TURNS,
      summaryDelayMs: 0,
      waitForFolds: true,
    });
    log(`scripted conversation, ${CONVERSATION_TURNS} turns, summarizer ${SLOW_SUMMARY_MS} ms`);
    const slow = await runOurConversation(services, { turns: CONVERSATION_TURNS, summaryDelayMs: SLOW_SUMMARY_MS });
    log(`LangChain peer, ${CONVERSATION_TURNS} turns, summarizer ${SLOW_SUMMARY_MS} ms`);
    const peer = await (
      await loadPeer()
    ).runPeerConversation({ turns: CONVERSATION_TURNS, summaryDelayMs: SLOW_SUMMARY_MS });
    raw.conversation = { instant, slow, peer };
    figures.push(
      ...contextFigures(instant),
      ...foldFigures(instant, slow, SLOW_SUMMARY_MS),
      ...peerFigures(slow, peer),
    );
  } finally {
    await services.stop();
  }
  // Sections in issue order (the runs themselves go in the order that keeps the memory figure clean).
  figures.sort((a, b) => Number.parseInt(a.section, 10) - Number.parseInt(b.section, 10));
  const table = renderTable(figures);
  const about = machine();
  // The CPU figures first, one line each: CPU time moves far less with the machine's load than latency does.
  const headline = renderLines(figures.filter((figure) => figure.section === CPU_SECTION));
  process.stdout.write(
    `\n${headline}\n\n${about.cpus} × ${about.model}, ${about.memoryGb} GB, Node ${about.node}, ${about.platform}, load average ${os
      .loadavg()
      .map((value) => value.toFixed(1))
      .join(' ')}${quick ? ' (BENCH_QUICK)' : ''}\n\n${table}\n\n`,
  );
  const missed = figures.filter((figure) => verdict(figure) === 'MISSED').length;
  const file = await writeResults(path.resolve(import.meta.dirname, 'results'), {
    machine: about,
    quick,
    seconds: (Date.now() - started) / 1000,
    figures,
    raw,
  });
  process.stdout.write(
    `${figures.filter((figure) => figure.target).length - missed} targets met, ${missed} missed; results in ${path.relative(process.cwd(), file)}\n`,
  );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
