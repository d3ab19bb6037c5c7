/**
 * A real NATS JetStream broker for tests: Debian's `nats-server` (`.ci/run` installs it; `NATS_SERVER` names another
 * binary) with `-js` and a temporary store directory, on free loopback ports, one server or a three-server cluster
 * (routes on loopback, server names n1..n3). Ready once its monitor answers `/healthz` (JetStream included);
 * `stop` kills it, `restart` starts it again on the same ports and store, `close` also removes the store. Every
 * server started here is also killed when the test process exits, so a failing test never leaves one behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

export const NATS_SERVER = process.env.NATS_SERVER ?? 'nats-server';

export interface NatsServer {
  readonly name: string;
  /** `nats://127.0.0.1:<port>`, for the client and for `[delivery.jetstream] servers`. */
  readonly url: string;
  readonly storeDir: string;
  /** Kills the server (SIGKILL unless `graceful`) and waits for its exit. */
  stop(graceful?: boolean): Promise<void>;
  /** Starts it again on the same ports and store; resolves when healthy. */
  restart(): Promise<void>;
  /** Stops it and removes its store. */
  close(): Promise<void>;
  /** What it wrote to stderr (its log). */
  log(): string;
}

interface Ports { client: number; monitor: number; cluster: number }

const live = new Set<ChildProcess>();
let cleanupInstalled = false;

/** One JetStream server. */
export async function startNatsServer(extraArgs: readonly string[] = []): Promise<NatsServer> {
  const server = makeServer('n1', await ports(), null, extraArgs);
  await server.restart();
  return server;
}

/** Three JetStream servers in one cluster; resolves when all three are healthy (a meta leader is elected). */
export async function startNatsCluster(): Promise<NatsServer[]> {
  const all = [await ports(), await ports(), await ports()];
  const servers = all.map((p, i) => makeServer(`n${i + 1}`, p, all.filter((_, j) => j !== i).map((o) => o.cluster), []));
  await Promise.all(servers.map((server) => server.restart()));
  return servers;
}

async function ports(): Promise<Ports> {
  return { client: await freePort(), monitor: await freePort(), cluster: await freePort() };
}

function makeServer(name: string, p: Ports, routes: number[] | null, extraArgs: readonly string[]): NatsServer {
  installCleanup();
  const storeDir = mkdtempSync(join(tmpdir(), `cdn-nats-${name}-`));
  const args = ['-js', '-sd', storeDir, '-a', '127.0.0.1', '-p', String(p.client), '-m', String(p.monitor), '-n', name, ...extraArgs];
  if (routes) args.push('--cluster_name', 'cdn', '--cluster', `nats://127.0.0.1:${p.cluster}`, '--routes', routes.map((port) => `nats://127.0.0.1:${port}`).join(','));
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  let stderr = '';
  const stop = async (graceful = false) => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill(graceful ? 'SIGTERM' : 'SIGKILL');
    await exited;
  };
  const restart = async () => {
    await stop();
    const started = spawn(NATS_SERVER, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child = started;
    live.add(started);
    started.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    const failed = new Promise<never>((_, reject) => started.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'ENOENT'
      ? new Error(`${NATS_SERVER} not found: install Debian's nats-server package (apt-get install -y nats-server) or set NATS_SERVER`)
      : error)));
    exited = new Promise<void>((resolve) => started.once('exit', () => { live.delete(started); resolve(); }));
    await Promise.race([healthy(p.monitor, started, () => stderr), failed]);
  };
  const close = async () => {
    await stop();
    rmSync(storeDir, { recursive: true, force: true });
  };
  return { name, url: `nats://127.0.0.1:${p.client}`, storeDir, stop, restart, close, log: () => stderr };
}

/** Polls `/healthz?js-enabled-only=true`, then `/healthz` (JetStream meta leader and streams current). */
async function healthy(monitor: number, child: ChildProcess, log: () => string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`nats-server exited with ${child.exitCode ?? child.signalCode}:\n${log()}`);
    try {
      const response = await fetch(`http://127.0.0.1:${monitor}/healthz`);
      if (response.ok) return;
      await response.body?.cancel();
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`nats-server not healthy within ${timeoutMs} ms:\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.once('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}
