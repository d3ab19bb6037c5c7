/**
 * History from the peer pool by proven hash (net/p2p/history-by-hash.ts) over real RLPx sessions on loopback: two
 * generated devnet chains share their genesis and part from block 1 (a self-consistent fork). Asked by number, a
 * peer on the fork serves its own blocks, every one valid; asked down from the canonical hash it serves nothing and
 * is left out (not banned), so the range comes from a peer on the canonical chain, receipts included — or, with none
 * connected, fails naming the block and why.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyBlockMaterials } from '../../../actors/node/tasks.js';
import { batchOutcomes, materialInput } from '../../../actors/peers/verify-batch.js';
import type { AcquiredBlock } from '../../../net/p2p/acquire.js';
import { fetchHistoryHeadersByHash, fetchHistoryRangeByHash } from '../../../net/p2p/history-by-hash.js';
import { fetchHistoryRange, HistoryUnavailableError, type HistoryRangeOptions } from '../../../net/p2p/history-range.js';
import { PeerPool } from '../../../net/p2p/peer-pool.js';
import { client, connect, destroyHosts, servingPeer } from './loopback-peers.js';
import { forkedDevnetChains, type PeerChain } from './devnet-chains.js';

function options(pool: PeerPool): HistoryRangeOptions {
  return {
    pool, timeoutMs: 5000, headersPerRequest: 8,
    verifyBatch: async (batch: readonly AcquiredBlock[]) => batchOutcomes(await verifyBlockMaterials(batch.map(materialInput))),
  };
}

let canonical: PeerChain;
let fork: PeerChain;

before(async () => {
  ({ canonical, fork } = await forkedDevnetChains(30));
});

after(() => destroyHosts());

describe('history from the peer pool by proven hash', () => {
  it('the two chains are a fork: one genesis, other blocks from block 1', () => {
    assert.equal(fork.blocks[0]!.hash, canonical.blocks[0]!.hash);
    assert.deepEqual(fork.identity, canonical.identity);
    for (let n = 1; n <= 30; n += 1) assert.notEqual(fork.blocks[n]!.hash, canonical.blocks[n]!.hash);
  });

  it('a peer on a fork is left out, not banned; the range comes from a canonical peer, receipts included', async () => {
    const forked = await servingPeer(fork.identity, fork.reader, fork.blocks);
    const honest = await servingPeer(canonical.identity, canonical.reader, canonical.blocks);
    const host = client(canonical.identity);
    const pool = new PeerPool({ concurrency: 8, windowBlocks: 4, banMs: 60_000 });
    pool.add(await connect(host, forked));
    // Asked by number, the forked peer serves its own chain, valid block by block: the history lane's anchor refuses it.
    const byNumber = await fetchHistoryRange(options(pool), 5, 20, true);
    assert.deepEqual(byNumber.map((b) => b.hash), fork.blocks.slice(5, 21).map((b) => b.hash));
    // Asked down from the proven hash, it holds nothing: with no other peer, the block and the reason are named.
    const top = canonical.blocks[20]!.hash;
    await assert.rejects(fetchHistoryRangeByHash(options(pool), top, 5, 20, true), (error: unknown) => {
      assert.ok(error instanceof HistoryUnavailableError, String(error));
      assert.equal(error.blockNumber, 20);
      assert.match(error.message, new RegExp(`^block 20: no connected peer serves the canonical header ${top} \\(peers on another branch are left out; connected peers announce 0\\.\\.30\\)$`));
      return true;
    });
    assert.equal(pool.counters.bans, 0, 'a peer on another branch is not banned');
    pool.add(await connect(host, honest));
    const fetched = await fetchHistoryRangeByHash(options(pool), top, 5, 20, true);
    assert.deepEqual(fetched.map((b) => b.hash), canonical.blocks.slice(5, 21).map((b) => b.hash));
    for (const block of fetched) assert.deepEqual(block.receipts, canonical.receipts.get(block.hash), `block ${block.number}: the canonical receipts`);
    const headers = await fetchHistoryHeadersByHash(options(pool), canonical.blocks[12]!.hash, 1, 12);
    assert.deepEqual(headers.map((h) => h.hash), canonical.blocks.slice(1, 13).map((b) => b.hash));
    assert.equal(pool.counters.bans, 0);
  });
});
