/**
 * Starts the real PostgreSQL sink the way a user does (`chain-node sink postgres --config sink.toml --set …`) in a
 * child process, with the consumer credential in an environment file (mode 600), its /metrics on a free loopback
 * port; stops it with a signal, `restart` starts it again on the same config.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from './node-process.js';
import { freePort } from './ports.js';

export const SINK_CREDENTIAL = 'sink-consumer-credential-do-not-log-7f3a';

export interface SinkProcess {
  readonly configFile: string;
  readonly metricsUrl: string;
  /** Every line the sink processes wrote so far (all runs). */
  readonly output: string[];
  child(): ChildProcess;
  /** Sends a signal (default SIGTERM) and resolves with the exit code (or the signal's name). */
  stop(signal?: NodeJS.Signals): Promise<number | string | null>;
  /** Starts it again (same config). */
  restart(): void;
  /** Resolves with the exit code of the current process when it exits on its own. */
  exited(): Promise<number | string | null>;
  /** Throws, with its last output lines, when the current process has exited (for probes that wait on it). */
  assertRunning(): void;
}

export interface StartSinkOptions {
  readonly nodeUrl: string;
  readonly postgresUrl: string;
  /** `[[processors]]` and any other sections (appended to the generated file). */
  readonly toml: string;
  readonly sets?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  readonly dir?: string;
}

export async function startSinkProcess(options: StartSinkOptions): Promise<SinkProcess> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'cdn-sink-'));
  const credentialFile = join(dir, 'sink.env');
  writeFileSync(credentialFile, `CHAIN_NODE_SINK_CONSUMER_CREDENTIAL=${SINK_CREDENTIAL}\n`);
  chmodSync(credentialFile, 0o600);
  const port = await freePort();
  const configFile = join(dir, 'sink.toml');
  writeFileSync(configFile, [
    '[node]', `url = "${options.nodeUrl}"`,
    '[consumer]', 'credentials_file = "sink.env"', 'idle_poll_ms = 20',
    '[postgres]', `url = "${options.postgresUrl}"`,
    '[metrics]', `listen = "127.0.0.1:${port}"`,
    '[sink]', 'shutdown_timeout_seconds = 20',
    options.toml,
  ].join('\n'));
  const output: string[] = [];
  let child!: ChildProcess;
  let exit: Promise<number | string | null> = Promise.resolve(null);
  const spawnSink = () => {
    child = spawn(process.execPath, [CLI, 'sink', 'postgres', '--config', configFile, ...(options.sets ?? []).flatMap((s) => ['--set', s])], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
    const collect = (chunk: Buffer) => output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    const current = child;
    exit = new Promise((resolve) => current.once('close', (code, signal) => resolve(code ?? signal)));
  };
  spawnSink();
  return {
    configFile, output, metricsUrl: `http://127.0.0.1:${port}/metrics`,
    child: () => child,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exit;
    },
    restart: spawnSink,
    exited: () => exit,
    assertRunning() {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the sink exited with ${child.exitCode ?? child.signalCode}:\n${output.slice(-30).join('\n')}`);
    },
  };
}
