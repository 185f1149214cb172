import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

function readOrEmpty(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** `[pid, ppid, utime + stime in ticks]` of every process /proc shows. */
function processTimes(): [number, number, number][] {
  const times: [number, number, number][] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readOrEmpty(`/proc/${name}/stat`);
    // The command name (field 2) is in parentheses and may hold spaces: fields are counted after its ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields.length < 13) continue;
    times.push([Number(name), Number(fields[1]), Number(fields[11]) + Number(fields[12])]);
  }
  return times;
}

/**
 * The CPU time (ms) the Postgres server listening on `port` has used so far: its postmaster and its children (the
 * backends, checkpointer, autovacuum...). Linux only (/proc), 10 ms resolution; a backend that exited takes its time
 * with it, so measure over spans where the app's pooled connections stay open. Returns null when not found.
 */
export function postgresCpuMs(port: number): number | null {
  let postmaster = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const args = readOrEmpty(`/proc/${name}/cmdline`).split('\0');
    const portIndex = args.indexOf('-p');
    if (args.includes('-D') && portIndex >= 0 && args[portIndex + 1] === String(port)) {
      postmaster = Number(name);
      break;
    }
  }
  if (postmaster === 0) return null;
  let ticks = 0;
  for (const [pid, ppid, used] of processTimes()) if (pid === postmaster || ppid === postmaster) ticks += used;
  return (ticks * 1000) / TICKS_PER_SECOND;
}
