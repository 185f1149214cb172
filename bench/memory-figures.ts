import type { Figure } from './support/report';
import { round } from './support/stats';
import type { MemoryResult } from './throughput';

/** The heap figures of the memory section (section 7), shared by `npm run bench` and `npm run bench:memory`. */
export function memoryFigures(memory: MemoryResult): Figure[] {
  const section = '7 memory';
  const { tokenCache } = memory;
  return [
    {
      section,
      name: 'V8 heap in use, settled: after the throughput run / first memory point / last',
      value: memory.heapUsedMb.map((value) => round(value, 1)).join(' / '),
      unit: 'MB',
    },
    {
      section,
      name: `heap growth per message through turns, once warm (settled server, outside compiled code; slope over ${memory.memoryRuns + 1} points, ${memory.storedMessages} messages)`,
      value: round(memory.kbPerMessage, 3),
      unit: 'KB',
      target: { op: '<=', value: 0.1 },
      note: `± ${round(memory.kbPerMessageSpread, 3)} KB (2 SE); single runs ${memory.kbPerMessageByRun.map((value) => round(value, 2)).join(' / ')} KB`,
    },
    {
      section,
      name: 'the same slope over the whole heap, compiled code included',
      value: round(memory.kbPerMessageWithCode, 3),
      unit: 'KB',
    },
    {
      section,
      name: 'compiled code and bytecode in the heap (V8, with metadata) at the first / last memory point',
      value: memory.codeMb.map((value) => round(value, 2)).join(' / '),
      unit: 'MB',
    },
    {
      section,
      name: 'token-count cache at the first memory point (texts, characters / bounds)',
      value: `${tokenCache.entries} / ${tokenCache.maxEntries}, ${tokenCache.chars} / ${tokenCache.maxChars}`,
      note: memory.extraWarmupRuns > 0 ? `${memory.extraWarmupRuns} extra warm-up runs to fill it` : undefined,
    },
  ];
}
