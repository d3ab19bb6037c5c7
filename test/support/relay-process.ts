/**
 * Starts a real relay the way a user does (`chain-node relay --config relay.toml --set …`) in a child process on a
 * free loopback port, and stops it with a signal; `restart` starts it again on the same port and config.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from './node-process.js';
import { freePort } from './ports.js';

export interface RelayProcess {
  readonly baseUrl: string;
  readonly port: number;
  readonly configFile: string;
  /** Every line the current process wrote so far. */
  readonly output: string[];
  child(): ChildProcess;
  /** Sends a signal (default SIGTERM) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Starts the relay again (same port, same config); resolves when ready unless `waitReady` is false. */
  restart(waitReady?: boolean): Promise<void>;
}

export interface StartRelayOptions {
  /** The whole relay.toml except `[listeners]` (written by this helper). */
  readonly toml: string;
  readonly sets?: readonly string[];
  readonly waitReady?: boolean;
  readonly readyTimeoutMs?: number;
  /** Where relay.toml goes (default: a new temporary directory). */
  readonly dir?: string;
}

/** The relay's `[delivery.jetstream]` for `servers`, `stream` and `subject_prefix`. */
export function relayJetstreamToml(servers: readonly string[], stream: string, subjectPrefix: string): string {
  return `[delivery.jetstream]\nservers = [${servers.map((s) => JSON.stringify(s)).join(', ')}]\nstream = "${stream}"\nsubject_prefix = "${subjectPrefix}"\n`;
}

export async function startRelayProcess(options: StartRelayOptions): Promise<RelayProcess> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'cdn-relay-'));
  const port = await freePort();
  const configFile = join(dir, `relay-${port}.toml`);
  writeFileSync(configFile, `[listeners]\napi = "127.0.0.1:${port}"\n${options.toml}`);
  const baseUrl = `http://127.0.0.1:${port}`;
  const output: string[] = [];
  let child: ChildProcess;
  let exited: Promise<number | null> = Promise.resolve(null);
  const spawnRelay = () => {
    output.length = 0;
    child = spawn(process.execPath, [CLI, 'relay', '--config', configFile, ...(options.sets ?? []).flatMap((set) => ['--set', set])], { stdio: ['ignore', 'pipe', 'pipe'] });
    const collect = (chunk: Buffer) => output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    const current = child;
    exited = new Promise((resolve) => current.once('close', (code) => resolve(code)));
  };
  const waitReady = async () => {
    const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
    for (;;) {
      if (child.exitCode !== null) throw new Error(`relay exited with ${child.exitCode}:\n${output.join('\n')}`);
      try {
        if ((await fetch(`${baseUrl}/health/ready`)).status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        const last = await fetch(`${baseUrl}/health/ready`).then((r) => r.text(), (e: unknown) => String(e));
        child.kill('SIGKILL');
        throw new Error(`relay not ready within ${options.readyTimeoutMs ?? 60_000} ms: ${last}\n${output.join('\n')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const relay: RelayProcess = {
    baseUrl, port, configFile, output,
    child: () => child,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    async restart(ready = true) {
      await relay.stop('SIGKILL');
      spawnRelay();
      if (ready) await waitReady();
    },
  };
  spawnRelay();
  if (options.waitReady !== false) await waitReady();
  return relay;
}
