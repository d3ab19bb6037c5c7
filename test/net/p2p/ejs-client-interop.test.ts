/**
 * Interop with a real third-party execution peer: `@ethereumjs/client` 0.10.5 (installed apart, by
 * `npm ci --prefix test/peers/ethereumjs-client`) seals a Clique PoA (London) chain, and the node's RLPx host and
 * acquisition code follow it: the handshake (eth/68, the highest version both speak), the status check (network id,
 * genesis, fork id), qualification against the genesis header, and two pre-merge PoA blocks fetched and verified
 * whole with their receipts. The client binds its RLPx listener to 0.0.0.0 with no option to change that, so both
 * run in a network namespace of their own made for the test (`unshare -n`, loopback only): nothing outside the
 * namespace can reach the listener. Skipped, saying why, where the client is not installed or no namespace can be
 * made (not root, no `unshare`/`ip`).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PROJECT_ROOT } from '../../support/paths.js';

const CLI = join(PROJECT_ROOT, 'test', 'peers', 'ethereumjs-client', 'node_modules', '@ethereumjs', 'client', 'dist', 'esm', 'bin', 'cli.js');
const RUN = fileURLToPath(new URL('./ejs-peer-follow.js', import.meta.url));
const BLOCKS = 2;

function whyNot(): string | null {
  if (!existsSync(CLI)) return `@ethereumjs/client is not installed (run: npm ci --prefix test/peers/ethereumjs-client)`;
  const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return `no network namespace can be made here (unshare -n: ${probe.error?.message ?? probe.stderr.trim()})`;
  return null;
}

describe('@ethereumjs/client as a third-party peer', () => {
  const skip = whyNot();
  it('follows its Clique PoA chain: eth/68 handshake, qualification, blocks and receipts verified', { skip: skip ?? false, timeout: 180_000 }, async () => {
    const child = spawn('unshare', ['-n', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, RUN, String(BLOCKS), CLI], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8'); });
    child.stderr.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString('utf8')).slice(-4000); });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const line = stdout.trim().split('\n').at(-1) ?? '';
    const result = JSON.parse(line || '{}') as {
      ok: boolean; error?: string; version: number; remoteNetworkId: string; remoteGenesis: string; genesis: string; qualified: boolean; bans: number;
      blocks: { number: number; hash: string; parentHash: string; difficulty: string; extraDataBytes: number; receipts: number | null; baseFee: string | null }[];
    };
    assert.equal(result.ok, true, `${result.error ?? 'no result'} (exit ${code}; stderr: ${stderr})`);
    assert.equal(code, 0);
    assert.equal(result.version, 68);
    assert.equal(result.remoteNetworkId, '123456');
    assert.equal(result.remoteGenesis, result.genesis);
    assert.equal(result.qualified, true);
    assert.equal(result.bans, 0);
    assert.deepEqual(result.blocks.map((b) => b.number), [1, 2]);
    assert.equal(result.blocks[0]!.parentHash, result.genesis);
    assert.equal(result.blocks[1]!.parentHash, result.blocks[0]!.hash);
    for (const block of result.blocks) {
      // Clique: 32 bytes of vanity, the 65-byte seal; in-turn difficulty 2 (a single sealer is always in turn).
      assert.equal(block.extraDataBytes, 97);
      assert.equal(block.difficulty, '2');
      assert.ok(block.baseFee !== null, 'London headers carry a base fee');
      assert.ok(block.receipts !== null, 'receipts were fetched and verified');
    }
  });
});
