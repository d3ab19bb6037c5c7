/**
 * A real upstream node for tests: foundry's `anvil` (Prague) on a free loopback port, answering JSON-RPC over HTTP
 * and WebSocket on the same port. `startAnvil` resolves once it answers; `stop` kills it. Every anvil started here is
 * also killed when the test process exits or is interrupted, so a failing test never leaves one behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from './paths.js';
import { freePort } from './ports.js';

export const ANVIL_BINARY = join(PROJECT_ROOT, 'node_modules', '@foundry-rs', 'anvil-linux-amd64', 'bin', 'anvil');

/** anvil's first well-known dev account (funded with 10,000 ETH on every anvil chain). */
export const DEV_PRIVATE_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
export const ANVIL_CHAIN_ID = 31337;

export interface Anvil {
  readonly port: number;
  readonly url: string;
  readonly wsUrl: string;
  /** One JSON-RPC call; a JSON-RPC error rejects. */
  rpc<Result = unknown>(method: string, params?: readonly unknown[]): Promise<Result>;
  /** Mines `blocks` blocks and returns the new head number. */
  mine(blocks?: number): Promise<number>;
  stop(): Promise<void>;
}

export interface StartAnvilOptions {
  readonly args?: readonly string[];
  readonly readyTimeoutMs?: number;
}

const live = new Set<ChildProcess>();
let cleanupInstalled = false;

export async function startAnvil(options: StartAnvilOptions = {}): Promise<Anvil> {
  if (!existsSync(ANVIL_BINARY)) throw new Error(`anvil is not installed at ${ANVIL_BINARY}: run npm ci (devDependency @foundry-rs/anvil)`);
  installCleanup();
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const port = await freePort();
    try {
      return await launch(port, options);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

async function launch(port: number, options: StartAnvilOptions): Promise<Anvil> {
  const args = ['--host', '127.0.0.1', '--port', String(port), '--hardfork', 'prague', '--silent', ...(options.args ?? [])];
  const child = spawn(ANVIL_BINARY, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  live.add(child);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => { live.delete(child); resolve(); }));
  const url = `http://127.0.0.1:${port}`;
  let nextId = 1;
  const rpc = async <Result>(method: string, params: readonly unknown[] = []): Promise<Result> => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }) });
    const body = (await response.json()) as { result?: Result; error?: { message: string } };
    if (body.error) throw new Error(`anvil ${method}: ${body.error.message}`);
    return body.result as Result;
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  try {
    await waitUntilAnswering(rpc, child, options.readyTimeoutMs ?? 10_000);
  } catch (error) {
    await stop();
    throw new Error(`anvil did not start on port ${port}: ${(error as Error).message}${stderr ? `\n${stderr}` : ''}`);
  }
  const mine = async (blocks = 1) => {
    await rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
    return Number(await rpc<string>('eth_blockNumber'));
  };
  return { port, url, wsUrl: `ws://127.0.0.1:${port}`, rpc, mine, stop };
}

async function waitUntilAnswering(rpc: Anvil['rpc'], child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited with ${child.exitCode ?? child.signalCode}`);
    try {
      await rpc('eth_chainId');
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`no answer within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/** Kills every live anvil when this process exits or is interrupted (then lets the signal do its default). */
function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  const killAll = () => {
    for (const child of live) child.kill('SIGKILL');
  };
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killAll();
      process.kill(process.pid, signal);
    });
  }
}
