import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** One printed figure: a value, and when it has a target, whether the target is met. */
export interface Figure {
  section: string;
  name: string;
  value: number | string;
  unit?: string;
  /** `<=` or `>=` a number; absent for figures printed for information. */
  target?: { op: '<=' | '>='; value: number };
  note?: string;
}

export function verdict(figure: Figure): 'met' | 'MISSED' | '' {
  if (!figure.target || typeof figure.value !== 'number' || Number.isNaN(figure.value))
    return figure.target ? 'MISSED' : '';
  const { op, value } = figure.target;
  return (op === '<=' ? figure.value <= value : figure.value >= value) ? 'met' : 'MISSED';
}

function formatValue(value: number | string): string {
  if (typeof value === 'string') return value;
  if (Number.isNaN(value)) return 'n/a';
  const abs = Math.abs(value);
  return abs >= 100 ? value.toFixed(0) : abs >= 10 ? value.toFixed(1) : value.toFixed(2);
}

/** The table `npm run bench` prints (also pasted into bench/README.md). */
export function renderTable(figures: readonly Figure[]): string {
  const rows = figures.map((figure) => [
    figure.section,
    figure.name,
    `${formatValue(figure.value)}${figure.unit ? ` ${figure.unit}` : ''}`,
    targetText(figure),
    verdict(figure),
    figure.note ?? '',
  ]);
  const header = ['#', 'figure', 'value', 'target', 'result', 'note'];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  return [line(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** One line a figure, value before target: `server CPU per turn (throughput run)  2.70 ms  target <= 3 ms  met`. */
export function renderLines(figures: readonly Figure[]): string {
  const width = Math.max(0, ...figures.map((figure) => figure.name.length));
  return figures
    .map((figure) => {
      const value = `${formatValue(figure.value)}${figure.unit ? ` ${figure.unit}` : ''}`;
      const target = figure.target ? `  target ${targetText(figure)}  ${verdict(figure)}` : '';
      return `${figure.name.padEnd(width)}  ${value.padStart(9)}${target}`;
    })
    .join('\n');
}

function targetText(figure: Figure): string {
  if (!figure.target) return '';
  return `${figure.target.op} ${figure.target.value}${figure.unit && !figure.unit.startsWith('×') ? ` ${figure.unit}` : ''}`;
}

export function machine(): { cpus: number; model: string; memoryGb: number; node: string; platform: string } {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    model: cpus[0]?.model ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}

export async function writeResults(directory: string, payload: unknown): Promise<string> {
  await mkdir(directory, { recursive: true });
  const file = path.join(directory, `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(file, `${JSON.stringify(payload, null, 2)}\n`);
  return file;
}
