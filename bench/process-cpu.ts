import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Linux's clock ticks per second, the unit of /proc/<pid>/stat's CPU times. */
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** User and system CPU seconds used so far by process `pid`; undefined where /proc is missing. */
export function cpuSeconds(pid: number): { user: number; system: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / CLOCK_TICKS, system: Number(fields[12]) / CLOCK_TICKS };
  } catch {
    return undefined;
  }
}
