/**
 * Who a process is, beyond its pid: its start time (field 22 of /proc/<pid>/stat, clock ticks
 * since boot) and the boot it belongs to. A pid with another start time or another boot id is
 * a different process that reused the number.
 */
import { readFileSync } from 'node:fs';

export interface ProcessIdentity {
  readonly pid: number;
  /** null where /proc is not available or not readable. */
  readonly startTime: number | null;
  readonly bootId: string | null;
}

interface ProcStat {
  readonly state: string;
  readonly startTime: number;
}

export function currentProcessIdentity(): ProcessIdentity {
  return { pid: process.pid, startTime: readProcStat(process.pid)?.startTime ?? null, bootId: currentBootId() };
}

/** True unless the process is provably gone: no such pid, a zombie, or a pid reused by another process. */
export function isProcessAlive(identity: ProcessIdentity): boolean {
  const bootId = currentBootId();
  if (identity.bootId !== null && bootId !== null && identity.bootId !== bootId) return false;
  if (!pidExists(identity.pid)) return false;
  const stat = readProcStat(identity.pid);
  // Unreadable /proc (other OS, hidepid): the pid exists, so assume it is the holder.
  if (stat === undefined) return true;
  if (stat.state === 'Z' || stat.state === 'X') return false;
  return identity.startTime === null || stat.startTime === identity.startTime;
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

function readProcStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Field 2 (the command name) is parenthesised and may itself contain spaces or parentheses.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const startTime = Number(fields[19]);
  if (state === undefined || !Number.isSafeInteger(startTime)) return undefined;
  return { state, startTime };
}

function currentBootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}
