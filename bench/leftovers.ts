/**
 * What a bench run has started and not yet stopped — child processes and temporary directories —
 * so that an interrupted run (Ctrl-C, SIGTERM) stops and removes them instead of leaving a node
 * listening or a data directory behind. Normal runs stop their own things; this is the net under them.
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';

const children = new Set<ChildProcess>();
const directories = new Set<string>();

/** Tracks `child` until it exits. */
export function trackChild(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Tracks `dir` until the returned function (which removes it) is called. */
export function trackDirectory(dir: string): () => void {
  directories.add(dir);
  return () => {
    directories.delete(dir);
    rmSync(dir, { recursive: true, force: true });
  };
}

/** Kills every tracked process (SIGKILL: there is no time to wait) and removes every tracked directory. */
export function removeLeftovers(): { processes: number; directories: number } {
  const counts = { processes: children.size, directories: directories.size };
  for (const child of children) child.kill('SIGKILL');
  for (const dir of directories) rmSync(dir, { recursive: true, force: true });
  children.clear();
  directories.clear();
  return counts;
}

/** Whether anything is still tracked: a finished run that leaves something behind has a bug. */
export function leftoverCount(): { processes: number; directories: number } {
  return { processes: children.size, directories: directories.size };
}
