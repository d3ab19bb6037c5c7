/**
 * Ponder 0.16 (a third-party indexer; installed apart in `test/peers/ponder` by
 * `npm ci --prefix test/peers/ponder`) run as a client of a node's JSON-RPC: it indexes ERC-20
 * Transfer logs of the given tokens into per-holder balances (the app in `test/peers/ponder`), in
 * its embedded PGlite database, through `endBlock`. Used by the `ponder` bench workload and by
 * `test/e2e/ponder.test.ts`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, rpc } from '../node.js';
import { exitOf } from './spawn.js';
import { trackChild } from '../leftovers.js';

/** The project root: the nearest folder above this file whose package.json names this project. */
function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && readFileSync(manifest, 'utf8').includes('"chain-data-node"')) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('the project root (package.json of chain-data-node) is not above bench/load');
    dir = parent;
  }
}

export const PONDER_ROOT = join(projectRoot(), 'test', 'peers', 'ponder');
const PONDER_BIN = join(PONDER_ROOT, 'node_modules', 'ponder', 'dist', 'esm', 'bin', 'ponder.js');

/** Null when Ponder is installed, else what to run. */
export function ponderMissing(): string | null {
  return existsSync(PONDER_BIN) ? null : 'Ponder is not installed: npm ci --prefix test/peers/ponder (.ci/run does it)';
}

/**
 * Ponder takes a block as final once it is this many blocks below `latest` on a chain id it does not
 * know (`getFinalityBlockCount` in ponder/dist/esm/utils/finality.js; the node's `finalized` tag is not
 * consulted): its backfill, after which `/ready` answers 200, stops there and the blocks above are
 * indexed live. Starting it only when `latest` is this far past `endBlock` makes `/ready` mean the
 * whole range is indexed, and the backfill figure cover the whole range.
 */
export const PONDER_FINALITY_BLOCKS = 30;

export interface PonderOptions {
  readonly rpcUrl: string;
  readonly chainId: number;
  readonly tokens: readonly string[];
  readonly endBlock: number;
  /** Where PGlite keeps its database (a fresh directory). */
  readonly databaseDir: string;
  /** How long to wait for the node's head to pass `endBlock` by PONDER_FINALITY_BLOCKS (default 120 s). */
  readonly headTimeoutMs?: number;
}

/** Waits until the node's head is PONDER_FINALITY_BLOCKS past `endBlock`, so Ponder backfills the whole range. */
async function waitForPonderFinality(options: PonderOptions): Promise<void> {
  const timeoutMs = options.headTimeoutMs ?? 120_000;
  const deadline = Date.now() + timeoutMs;
  let head = -1;
  while ((head = Number(await rpc<string>(options, 'eth_blockNumber', []))) < options.endBlock + PONDER_FINALITY_BLOCKS) {
    if (Date.now() > deadline) throw new Error(`the node's head is ${head} after ${timeoutMs} ms; Ponder needs ${options.endBlock + PONDER_FINALITY_BLOCKS} to take block ${options.endBlock} as final`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface PonderProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Resolves once `/ready` answers 200 (Ponder has backfilled, hence indexed, through `endBlock`); fails if it exits first. */
  ready(timeoutMs: number): Promise<void>;
  /**
   * Seconds between Ponder's "Started backfill indexing" and "Completed backfill indexing" log lines
   * (waiting up to 10 s for them to come through the pipe; null when they never do).
   */
  backfillSeconds(): Promise<number | null>;
  output(): string;
  stop(): Promise<void>;
}

export async function startPonder(options: PonderOptions): Promise<PonderProcess> {
  await waitForPonderFinality(options);
  const port = await freePort();
  const child = trackChild(spawn(process.execPath, [PONDER_BIN, '--root', PONDER_ROOT, '--log-format', 'json', 'start', '--port', String(port), '--hostname', '127.0.0.1', '--schema', 'cdn'], {
    cwd: PONDER_ROOT,
    env: {
      ...process.env,
      PONDER_TELEMETRY_DISABLED: 'true',
      CDN_PONDER_RPC: options.rpcUrl,
      CDN_PONDER_CHAIN_ID: String(options.chainId),
      CDN_PONDER_TOKENS: options.tokens.join(','),
      CDN_PONDER_END: String(options.endBlock),
      CDN_PONDER_DB: options.databaseDir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  }));
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => { text += chunk.toString('utf8'); });
  child.stderr!.on('data', (chunk: Buffer) => { text += chunk.toString('utf8'); });
  const url = `http://127.0.0.1:${port}`;
  const timeOf = (message: string): number | null => {
    for (const line of text.split('\n')) {
      if (!line.includes(message)) continue;
      try {
        return Number((JSON.parse(line) as { time: number }).time);
      } catch {
        return null;
      }
    }
    return null;
  };
  return {
    url,
    child,
    async ready(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`Ponder exited (${child.exitCode ?? child.signalCode}):\n${text.slice(-4000)}`);
        if ((await fetch(`${url}/ready`).then((r) => r.status, () => 0)) === 200) return;
        if (Date.now() > deadline) throw new Error(`Ponder was not ready within ${timeoutMs} ms:\n${text.slice(-4000)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async backfillSeconds() {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const started = timeOf('Started backfill indexing');
        const completed = timeOf('Completed backfill indexing');
        if (started !== null && completed !== null) return (completed - started) / 1000;
        if (Date.now() > deadline) return null;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    output: () => text,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exitOf(child);
    },
  };
}
