/**
 * CPU one node start costs: spawns `chain-node start` (as the e2e tests do) on free loopback ports and a
 * temporary data directory, polls `/health/ready` until 200, then reads the process's user+sys CPU
 * (every thread of it: /proc/<pid>/stat) and stops it. Prints one line per trial and the median.
 *
 * `node dist/bench/start-cpu.js [trials] [--config FILE] [-- node options…]`. CPU seconds, not wall
 * time, so a figure taken beside other work on a shared machine is still comparable.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../cli.js', import.meta.url));
const TICKS_PER_SECOND = 100;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** user+sys of a process (all its threads), in seconds. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

async function trial(toml: string, nodeOptions: string[]): Promise<{ cpu: number; wall: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-start-cpu-'));
  const config = join(dir, 'node.toml');
  writeFileSync(config, toml);
  const [api, rpcHttp, rpcWs] = [await freePort(), await freePort(), await freePort()];
  const started = Date.now();
  const child = spawn(process.execPath, [...nodeOptions, CLI, 'start', '--config', config,
    '--set', `data_dir=${join(dir, 'data')}`, '--set', `listeners.api=127.0.0.1:${api}`,
    '--set', `listeners.rpc_http=127.0.0.1:${rpcHttp}`, '--set', `listeners.rpc_ws=127.0.0.1:${rpcWs}`, '--set', 'log.level=warn'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`node exited with ${child.exitCode}`);
      try {
        if ((await fetch(`http://127.0.0.1:${api}/health/ready`)).status === 200) break;
      } catch {
        // not listening yet
      }
      if (Date.now() - started > 120_000) throw new Error('node not ready within 120 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return { cpu: cpuSeconds(child.pid!), wall: (Date.now() - started) / 1000 };
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
const dashes = args.indexOf('--');
const nodeOptions = dashes === -1 ? [] : args.slice(dashes + 1);
const own = dashes === -1 ? args : args.slice(0, dashes);
const configAt = own.indexOf('--config');
const toml = configAt === -1 ? '[[processors]]\nid = "blobs"\nkind = "blobs"\n' : readFileSync(own[configAt + 1]!, 'utf8');
const trials = Number(own.find((arg, i) => /^\d+$/.test(arg) && own[i - 1] !== '--config') ?? 5);
const results: number[] = [];
for (let i = 0; i < trials; i++) {
  const { cpu, wall } = await trial(toml, nodeOptions);
  results.push(cpu);
  process.stdout.write(`trial ${i + 1}: cpu ${cpu.toFixed(2)} s, wall ${wall.toFixed(2)} s\n`);
}
const sorted = [...results].sort((a, b) => a - b);
process.stdout.write(`median cpu ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} s (min ${sorted[0]!.toFixed(2)}, max ${sorted.at(-1)!.toFixed(2)}) over ${trials} trials\n`);
