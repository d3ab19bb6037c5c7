/**
 * A real node for one workload: `dist/cli.js start` in its own process, on free loopback ports and a
 * temporary data directory. Its configuration, in order of precedence (later wins): the run's base
 * config file (`npm run bench -- --config FILE`, else the schema's defaults), the workload's own
 * overrides (e.g. a fast devnet), the run's `--set` overrides and series point, and last the harness's
 * own keys (data directory, listen addresses, no API token: the load generators send none).
 * `stop` ends the process (SIGTERM, then SIGKILL) and removes the directory.
 */
import { createSocket } from 'node:dgram';
import { cpSync, mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, statSync, unlinkSync, writeSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { trackDirectory } from './leftovers.js';
import { exitOf, spawnNodeScript, stopProcess, tailOutput } from './load/spawn.js';

const CLI = fileURLToPath(new URL('../cli.js', import.meta.url));

/**
 * A devnet that makes a block every `blockTimeMs` without reorgs, with blob transactions but no
 * ordinary ones: at bench block rates their signing and sender recovery would take over half a core,
 * which the query and SSE workloads are not about (the ingest workload measures it).
 */
export function steadyDevnet(blockTimeMs: number): string[] {
  return [`devnet.block_time_ms=${blockTimeMs}`, 'devnet.reorg_every=0', 'devnet.transactions_per_block=0'];
}

/** The run-wide part of every bench node's configuration, set by the bench CLI before each workload. */
export interface BenchNodeBase {
  /** Absolute path of the base TOML file; null: an empty file (the schema's defaults). */
  readonly configFile: string | null;
  /** `dotted.key=value` overrides applied on top of the workload's own. */
  readonly sets: readonly string[];
}

let base: BenchNodeBase = { configFile: null, sets: [] };

export function setBenchNodeBase(next: BenchNodeBase): void {
  base = next;
}

export interface BenchNode {
  readonly baseUrl: string;
  /** The JSON-RPC listeners: `http://…` and `ws://…`. */
  readonly rpcUrl: string;
  readonly wsUrl: string;
  readonly dataDir: string;
  readonly pid: number;
  /** Resolves once `check` holds, polling every 100 ms; fails if the node exits or the time runs out. */
  waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void>;
  /**
   * Stops this process (graceful) and starts a new one on the same data directory with the
   * workload's `sets` replaced (e.g. a fast devnet to fill a log, then a slower one to measure).
   * This handle is spent afterwards; stop the returned one. `readyTimeoutMs` (default 30 s) covers
   * what the new process does before it is ready, e.g. a devnet replaying its stored chain. `toml`
   * replaces the configuration file; `between` runs while no node holds the data directory.
   */
  restart(sets: readonly string[], readyTimeoutMs?: number, toml?: string, between?: () => Promise<void>): Promise<BenchNode>;
  stop(): Promise<void>;
}

/** One JSON-RPC call to a node's `rpc_http` listener; an error answer throws with its message. */
export async function rpc<T>(node: Pick<BenchNode, 'rpcUrl'>, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const answer = (await response.json()) as { result?: T; error?: { message: string } };
  if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
  return answer.result as T;
}

export interface BenchNodeOptions {
  readonly toml?: string;
  readonly readyTimeoutMs?: number;
  /** Another build's `dist/cli.js` to run instead of this one (a baseline build beside this one in the same run). */
  readonly cli?: string;
  /** A data directory copied in as the node's own before it starts (e.g. a chain built once and cached). */
  readonly seedDataDir?: string;
  /** Flags for `node` itself (e.g. `--cpu-prof`, which NODE_OPTIONS does not allow). */
  readonly nodeArgs?: readonly string[];
}

/**
 * `toml`: the workload's own configuration file (e.g. its `[[processors]]`), used instead of the run's
 * base file; the run's `--set` overrides still apply on top. `readyTimeoutMs` (default 30 s) bounds the
 * wait for readiness.
 */
export async function startBenchNode(sets: readonly string[], options: BenchNodeOptions = {}): Promise<BenchNode> {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-bench-'));
  const removeDir = trackDirectory(dir);
  if (options.seedDataDir !== undefined) cpSync(options.seedDataDir, join(dir, 'data'), { recursive: true });
  return launch(dir, removeDir, sets, options.readyTimeoutMs ?? 30_000, options.toml, options.cli ?? CLI, options.nodeArgs ?? []);
}

async function launch(dir: string, removeDir: () => void, sets: readonly string[], readyTimeoutMs: number, toml: string | undefined, cli: string, nodeArgs: readonly string[]): Promise<BenchNode> {
  const dataDir = join(dir, 'data');
  let configFile = base.configFile;
  if (configFile === null || toml !== undefined) {
    configFile = join(dir, 'node.toml');
    writeFileSync(configFile, toml ?? '');
  }
  const [api, rpcHttp, rpcWs] = [await freePort(), await freePort(), await freePort()];
  const overrides = [
    'log.level=warn',
    ...sets,
    ...base.sets,
    `data_dir=${dataDir}`,
    `listeners.api=127.0.0.1:${api}`,
    `listeners.rpc_http=127.0.0.1:${rpcHttp}`,
    `listeners.rpc_ws=127.0.0.1:${rpcWs}`,
    'auth.token_file=',
  ];
  const args = ['start', '--config', configFile, ...overrides.flatMap((set) => ['--set', set])];
  const child = spawnNodeScript(cli, args, 'ignore', nodeArgs);
  const output = tailOutput(child);
  let exited = false;
  void exitOf(child).then(() => { exited = true; });
  const node: BenchNode = {
    baseUrl: `http://127.0.0.1:${api}`,
    rpcUrl: `http://127.0.0.1:${rpcHttp}`,
    wsUrl: `ws://127.0.0.1:${rpcWs}`,
    dataDir,
    pid: child.pid!,
    async waitFor(what, check, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (exited) throw new Error(`the node exited while waiting for ${what}:\n${output.join('\n')}`);
        if (await check().catch(() => false)) return;
        if (Date.now() > deadline) throw new Error(`the node did not reach ${what} within ${timeoutMs} ms:\n${output.join('\n')}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async restart(nextSets, readyTimeoutMs = 30_000, nextToml, between) {
      await stopProcess(child, 15_000);
      await between?.();
      return launch(dir, removeDir, nextSets, readyTimeoutMs, nextToml, cli, nodeArgs);
    },
    async stop() {
      await stopProcess(child, 15_000);
      removeDir();
    },
  };
  try {
    await node.waitFor('readiness', async () => (await fetch(`${node.baseUrl}/health/ready`)).status === 200, readyTimeoutMs);
  } catch (error) {
    await node.stop();
    throw error;
  }
  return node;
}

/**
 * Ports handed out come from below Linux's ephemeral range (32768–60999 by default): a port the
 * kernel picks for `listen(0)` is also one it picks for outgoing connections, so on a busy machine
 * a port found free that way could be taken by some client socket before the node bound it.
 */
const PORT_RANGE = { first: 20_000, last: 32_767 };
const handedOut = new Set<number>();

/**
 * The test runner runs test files in parallel processes, each picking ports (and the bench smoke
 * test runs the bench in a child): a port is also claimed across processes by a file created
 * exclusively in one directory for the whole machine, naming the claiming pid. A claim whose pid is
 * gone is stale and taken over; this process's claims are removed when it exits. The directory is
 * /tmp's, not TMPDIR's: a process given its own TMPDIR (the bench under its smoke test) still sees
 * every other process's claims.
 */
const CLAIMS_DIR = join('/tmp', `chain-node-port-claims-${process.getuid?.() ?? 0}`);
const claimed: string[] = [];

function claim(port: number): boolean {
  mkdirSync(CLAIMS_DIR, { recursive: true });
  const file = join(CLAIMS_DIR, String(port));
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      if (claimed.length === 0) process.once('exit', releaseClaims);
      claimed.push(file);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (claimHolderAlive(file)) return false;
      try { unlinkSync(file); } catch { /* another process took it over first */ }
    }
  }
  return false;
}

function claimHolderAlive(file: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
  // A claim being written has no pid yet: held, unless it was left empty long ago by a process that died.
  if (!Number.isSafeInteger(pid) || pid <= 0) {
    try {
      return Date.now() - statSync(file).mtimeMs < 10_000;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function releaseClaims(): void {
  for (const file of claimed) {
    try { unlinkSync(file); } catch { /* already gone */ }
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A TCP port on 127.0.0.1 that was free a moment ago and that this process has not handed out before (tests use it too). */
export function freePort(): Promise<number> {
  return pickPort('', bindable);
}

/** A port of PORT_RANGE, from a random start, that `free` accepts and that was not handed out before. */
async function pickPort(protocol: string, free: (port: number) => Promise<boolean>): Promise<number> {
  const span = PORT_RANGE.last - PORT_RANGE.first + 1;
  const start = Math.floor(Math.random() * span);
  for (let i = 0; i < span; i += 1) {
    const port = PORT_RANGE.first + ((start + i) % span);
    if (handedOut.has(port)) continue;
    if (!claim(port)) continue;
    handedOut.add(port);
    if (await free(port)) return port;
  }
  throw new Error(`no free ${protocol}port between ${PORT_RANGE.first} and ${PORT_RANGE.last}`);
}

function udpBindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    socket.once('error', () => resolve(false));
    socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
  });
}

/** A UDP port on 127.0.0.1 (discovery), picked like freePort: below the ephemeral range, never handed out twice. */
export function freeUdpPort(): Promise<number> {
  return pickPort('UDP ', udpBindable);
}
