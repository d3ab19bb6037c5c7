/**
 * Interop with a real third-party execution peer: `@ethereumjs/client` 0.10.5 (installed apart, by
 * `npm ci --prefix test/peers/ethereumjs-client`) seals a Clique PoA (London) chain, and the node's RLPx host and
 * acquisition code follow it: the handshake (eth/68, the highest version both speak), the status check (network id,
 * genesis, fork id), qualification against the genesis header, and two pre-merge PoA blocks fetched and verified
 * whole with their receipts, and the `p2p` history source backfilling its chain below a recorded block. The client binds its RLPx listener to 0.0.0.0 with no option to change that, so both
 * run in a network namespace of their own made for the test (`unshare -n`, loopback only): nothing outside the
 * namespace can reach the listener. Skipped, saying why, where the client is not installed or no namespace can be
 * made (not root, no `unshare`/`ip`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { EJS_CLIENT_CLI, ejsClientSkipReason, runProbeInNamespace } from '../../support/ejs-client.js';

const RUN = fileURLToPath(new URL('./ejs-peer-follow.js', import.meta.url));
const HISTORY = fileURLToPath(new URL('./ejs-peer-history.js', import.meta.url));
const BLOCKS = 2;
const TOP = 4;

describe('@ethereumjs/client as a third-party peer', () => {
  const skip = ejsClientSkipReason();
  it('follows its Clique PoA chain: eth/68 handshake, qualification, blocks and receipts verified', { skip: skip ?? false, timeout: 180_000 }, async () => {
    const { code, result, stderr } = await runProbeInNamespace<{
      ok: boolean; error?: string; version: number; remoteNetworkId: string; remoteGenesis: string; genesis: string; qualified: boolean; bans: number;
      blocks: { number: number; hash: string; parentHash: string; difficulty: string; extraDataBytes: number; receipts: number | null; baseFee: string | null }[];
    }>(RUN, [String(BLOCKS), EJS_CLIENT_CLI]);
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

  it('the p2p history source backfills its chain below a recorded block: every hash proven down from it, every block verified with its receipts', { skip: skip ?? false, timeout: 240_000 }, async () => {
    const { code, result, stderr } = await runProbeInNamespace<{
      ok: boolean; error?: string; genesis: string; bans: number; top: { number: number; hash: string; parentHash: string };
      blocks: { number: number; hash: string; linkHash: string | null; parentHash: string | null; body: boolean; receipts: boolean }[];
      probe: { kind: string; peers: { connected: number; holding: number } };
    }>(HISTORY, [String(TOP), EJS_CLIENT_CLI]);
    assert.equal(result.ok, true, `${result.error ?? 'no result'} (exit ${code}; stderr: ${stderr})`);
    assert.equal(code, 0);
    assert.deepEqual(result.blocks.map((b) => b.number), Array.from({ length: TOP }, (_, i) => i));
    assert.equal(result.blocks[0]!.hash, result.genesis, "block 0 is the client's genesis");
    result.blocks.forEach((block, i) => {
      assert.equal(block.linkHash, block.hash, `block ${block.number}: recorded with its proven link`);
      if (i > 0) assert.equal(block.parentHash, result.blocks[i - 1]!.hash);
      assert.ok(block.body && block.receipts, `block ${block.number}: body and receipts recorded`);
    });
    assert.equal(result.top.parentHash, result.blocks.at(-1)!.hash, 'the backfill links to the recorded block');
    assert.equal(result.bans, 0);
    assert.deepEqual([result.probe.kind, result.probe.peers.connected], ['p2p', 1]);
  });
});
