/**
 * A JetStream broker for bench workloads: Debian's `nats-server` (`NATS_SERVER` names another binary) with `-js`, its
 * store under `dir`, on free loopback ports; ready once its monitor answers `/healthz`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { stopProcess } from './spawn.js';
import { freePort } from '../node.js';

const NATS_SERVER = process.env.NATS_SERVER ?? 'nats-server';

export interface NatsProcess {
  readonly child: ChildProcess;
  /** `nats://127.0.0.1:<port>`. */
  readonly url: string;
  stop(): Promise<void>;
}

/** Polls `url` until it answers 200; fails when `child` exits first or the time runs out. */
export async function waitHttp(url: string, child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited:\n${output()}`);
    if (await fetch(url).then((r) => r.status === 200, () => false)) return;
    if (Date.now() > deadline) throw new Error(`${url} not ready within ${timeoutMs} ms:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function startNatsProcess(dir: string): Promise<NatsProcess> {
  const [client, monitor] = [await freePort(), await freePort()];
  const child = spawn(NATS_SERVER, ['-js', '-sd', join(dir, 'nats'), '-a', '127.0.0.1', '-p', String(client), '-m', String(monitor)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => { log += chunk.toString(); });
  await waitHttp(`http://127.0.0.1:${monitor}/healthz`, child, () => log, 20_000);
  return { child, url: `nats://127.0.0.1:${client}`, stop: () => stopProcess(child, 2000) };
}

