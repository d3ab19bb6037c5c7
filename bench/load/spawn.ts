/**
 * Starts a compiled bench script (`dist/bench/load/*.js`) as its own `node` process, through bash so
 * that its open-file limit can first be raised to the hard limit (thousands of sockets per process).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { trackChild } from '../leftovers.js';

/** The compiled path of a script in this folder, e.g. `loadScript('sse-clients')`. */
export function loadScript(name: string): string {
  return fileURLToPath(new URL(`./${name}.js`, import.meta.url));
}

/** `node [nodeArgs…] script args…` with the soft open-file limit raised to the hard one; stdout and stderr piped. */
export function spawnNodeScript(script: string, args: readonly string[], stdin: 'ignore' | 'pipe' = 'ignore', nodeArgs: readonly string[] = []): ChildProcess {
  const raiseThenExec = 'ulimit -n "$(ulimit -Hn)" && exec "$@"';
  return trackChild(spawn('bash', ['-c', raiseThenExec, 'bash', process.execPath, ...nodeArgs, script, ...args], { stdio: [stdin, 'pipe', 'pipe'] }));
}

/** Resolves with the exit code (or the signal's name) once the process has exited. */
export function exitOf(child: ChildProcess): Promise<number | string> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  if (child.signalCode !== null) return Promise.resolve(child.signalCode);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
}

/** SIGTERM, then SIGKILL if the process is still there after `graceMs`. */
export async function stopProcess(child: ChildProcess, graceMs: number): Promise<void> {
  const exited = exitOf(child);
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Keeps the last `max` lines a process wrote, for error messages. */
export function tailOutput(child: ChildProcess, max = 40): string[] {
  const lines: string[] = [];
  const collect = (chunk: Buffer) => {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (lines.length > max) lines.splice(0, lines.length - max);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  return lines;
}
