/**
 * How many cores a process kept busy over a stretch of wall time, so a figure can show whether the
 * server or the load generator ran out of CPU. Other processes read from /proc (Linux); this one from
 * `process.cpuUsage`.
 */
import { readFileSync } from 'node:fs';

/** USER_HZ: the unit of /proc/<pid>/stat times on every Linux architecture Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU seconds (user + system, every thread) `pid` has used (null: this process). */
export function cpuSeconds(pid: number | null): number {
  if (pid === null) {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1e6;
  }
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name start at field 3; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** Starts measuring `pid` (null: this process); the returned function gives the cores used since. */
export function startCpuMeter(pid: number | null): () => number {
  const cpuAtStart = cpuSeconds(pid);
  const wallAtStart = performance.now();
  return () => (cpuSeconds(pid) - cpuAtStart) / ((performance.now() - wallAtStart) / 1000);
}
