/**
 * `@ethereumjs/client` 0.10.5 as a third-party peer in tests (installed apart by `npm ci --prefix
 * test/peers/ethereumjs-client`). The client binds its listeners to 0.0.0.0 with no option to change that, so a
 * test runs it, and the probe script that talks to it, in a network namespace of its own (`unshare -n`, loopback
 * only): nothing outside the namespace can reach them.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PROJECT_ROOT } from './paths.js';

export const EJS_CLIENT_CLI = join(PROJECT_ROOT, 'test', 'peers', 'ethereumjs-client', 'node_modules', '@ethereumjs', 'client', 'dist', 'esm', 'bin', 'cli.js');

/** Why a test with the client cannot run here (not installed, or no network namespace can be made), or null. */
export function ejsClientSkipReason(): string | null {
  if (!existsSync(EJS_CLIENT_CLI)) return `@ethereumjs/client is not installed (run: npm ci --prefix test/peers/ethereumjs-client)`;
  const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return `no network namespace can be made here (unshare -n: ${probe.error?.message ?? probe.stderr.trim()})`;
  return null;
}

export interface ProbeOutcome<T> {
  readonly code: number | null;
  /** The JSON of the probe's last stdout line ({} when it printed none). */
  readonly result: T;
  /** The last 4,000 characters of its stderr. */
  readonly stderr: string;
}

/** Runs `node <script> ...args` in a fresh network namespace with loopback up, and reads the JSON it prints last. */
export async function runProbeInNamespace<T>(script: string, args: readonly string[]): Promise<ProbeOutcome<T>> {
  const child = spawn('unshare', ['-n', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8'); });
  child.stderr.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString('utf8')).slice(-4000); });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const line = stdout.trim().split('\n').at(-1) ?? '';
  return { code, result: JSON.parse(line || '{}') as T, stderr };
}

/** The enode URL the client logs once its listener is up; throws if it exits first. */
export async function clientEnode(client: ChildProcess, what: string): Promise<string> {
  for await (const line of createInterface({ input: client.stdout! })) {
    const match = /url=(enode:\/\/[0-9a-f]+@127\.0\.0\.1:\d+)/.exec(line);
    if (match) return match[1]!;
  }
  throw new Error(`the ethereumjs client ended before its ${what} was up`);
}
