/**
 * Starts the real node the way a user does (`chain-node start --config FILE --set …`) in a child
 * process, on free loopback ports and a temporary data directory, and stops it with a signal.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from './paths.js';
import { freePort } from './ports.js';

export const CLI = join(PROJECT_ROOT, 'dist', 'cli.js');

export interface NodeProcess {
  readonly child: ChildProcess;
  readonly baseUrl: string;
  /** The JSON-RPC listeners: `http://…` and `ws://…`. */
  readonly rpcUrl: string;
  readonly wsUrl: string;
  readonly dir: string;
  readonly dataDir: string;
  readonly configFile: string;
  /** Every line the node wrote to stdout and stderr so far. */
  readonly output: string[];
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

export interface StartNodeOptions {
  readonly toml?: string;
  readonly sets?: readonly string[];
  /** Reuse an existing directory (restart tests). */
  readonly dir?: string;
  readonly waitReady?: boolean;
  /** How long to wait for /health/ready (default 20 s). */
  readonly readyTimeoutMs?: number;
}

export async function startNodeProcess(options: StartNodeOptions = {}): Promise<NodeProcess> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'cdn-e2e-'));
  const dataDir = join(dir, 'data');
  const configFile = join(dir, 'node.toml');
  const [api, rpcHttp, rpcWs] = [await freePort(), await freePort(), await freePort()];
  writeFileSync(configFile, options.toml ?? '');
  const args = [
    CLI, 'start', '--config', configFile,
    '--set', `data_dir=${dataDir}`,
    '--set', `listeners.api=127.0.0.1:${api}`,
    '--set', `listeners.rpc_http=127.0.0.1:${rpcHttp}`,
    '--set', `listeners.rpc_ws=127.0.0.1:${rpcWs}`,
    ...(options.sets ?? []).flatMap((set) => ['--set', set]),
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const collect = (chunk: Buffer) => output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  // 'close', not 'exit': 'exit' can come before the last stdout/stderr chunks are read, and tests
  // read `output` once the process is gone.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code, signal) => resolve(code ?? (signal ? `signal ${signal}` as unknown as number : null))));
  const baseUrl = `http://127.0.0.1:${api}`;
  const node: NodeProcess = {
    child, baseUrl, rpcUrl: `http://127.0.0.1:${rpcHttp}`, wsUrl: `ws://127.0.0.1:${rpcWs}`, dir, dataDir, configFile, output, exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  if (options.waitReady !== false) {
    // A node that never got ready must not outlive the failed test (it would hold the run open).
    await waitUntil(node, async () => (await fetch(`${baseUrl}/health/ready`)).status === 200, options.readyTimeoutMs ?? 60_000).catch(async (error: unknown) => {
      await node.stop('SIGKILL');
      throw error;
    });
  }
  return node;
}

/** The blob processor's change-log head sequence (`…/changes/head`). */
export async function headSequence(node: Pick<NodeProcess, 'baseUrl'>): Promise<number> {
  return Number(((await (await fetch(`${node.baseUrl}/v1/processors/blobs/changes/head`)).json()) as { sequence: string }).sequence);
}

export async function waitUntil(node: NodeProcess, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (node.child.exitCode !== null) throw new Error(`node exited with ${node.child.exitCode}:\n${node.output.join('\n')}`);
    try {
      if (await check()) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`node not ready within ${timeoutMs} ms:\n${node.output.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Runs the CLI to completion. */
export function runCli(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    // 'close' (stdio drained), not 'exit', or the last chunks of stdout may be missing.
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
