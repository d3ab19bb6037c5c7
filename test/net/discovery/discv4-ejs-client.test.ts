/**
 * discv4 interop with a third-party execution client: `@ethereumjs/client` 0.10.5 (installed apart, by
 * `npm ci --prefix test/peers/ethereumjs-client`) runs its own discv4 (`--discV4=true`); two of the node's discv4
 * services seeded only with its enode URL get its PONG and find each other through its NEIGHBORS answers, with their
 * RLPx TCP ports. Both run in a network namespace made for the test (`unshare -n`, loopback only; the client binds
 * 0.0.0.0). Skipped, saying why, where the client is not installed or no namespace can be made.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PROJECT_ROOT } from '../../support/paths.js';

const CLI = join(PROJECT_ROOT, 'test', 'peers', 'ethereumjs-client', 'node_modules', '@ethereumjs', 'client', 'dist', 'esm', 'bin', 'cli.js');
const RUN = fileURLToPath(new URL('./ejs-discv4-probe.js', import.meta.url));

function whyNot(): string | null {
  if (!existsSync(CLI)) return `@ethereumjs/client is not installed (run: npm ci --prefix test/peers/ethereumjs-client)`;
  const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return `no network namespace can be made here (unshare -n: ${probe.error?.message ?? probe.stderr.trim()})`;
  return null;
}

describe('discv4 with @ethereumjs/client as a third-party bootnode', () => {
  const skip = whyNot();
  it('two discv4 services seeded with the client find it and, through its neighbours, each other', { skip: skip ?? false, timeout: 120_000 }, async () => {
    const child = spawn('unshare', ['-n', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, RUN, CLI], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8'); });
    child.stderr.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString('utf8')).slice(-4000); });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const line = stdout.trim().split('\n').at(-1) ?? '';
    const result = JSON.parse(line || '{}') as {
      ok: boolean; error?: string; clientAnswered: boolean; tables: number[];
      aByB: { tcp: number; udp: number; expectedUdp: number; ip: string }; bByA: { tcp: number; udp: number; expectedUdp: number };
    };
    assert.equal(result.ok, true, `${result.error ?? 'no result'} (exit ${code}; stderr: ${stderr})`);
    assert.equal(code, 0);
    assert.equal(result.clientAnswered, true);
    assert.deepEqual(result.aByB, { tcp: 30_611, udp: result.aByB.expectedUdp, expectedUdp: result.aByB.expectedUdp, ip: '127.0.0.1' });
    assert.deepEqual(result.bByA, { tcp: 30_612, udp: result.bByA.expectedUdp, expectedUdp: result.bByA.expectedUdp });
    for (const size of result.tables) assert.ok(size >= 1);
  });
});
