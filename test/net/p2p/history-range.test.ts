/**
 * History from the peer pool (net/p2p/history-range.ts) over real RLPx sessions on loopback serving the hive `eth`
 * test chain: a range below the head fetched back byte for byte and verified; a peer serving a tampered body is
 * banned and the range completes from an honest one; over a generated devnet chain with receipts, a peer serving a
 * tampered receipt is banned and the range completes, receipts included, from an honest one; a peer announcing a range it does not serve is left out (not
 * banned); a block nobody serves fails naming it; and the history budget never takes the live head's last slot.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyBlockMaterials } from '../../../actors/node/tasks.js';
import { batchOutcomes, materialInput } from '../../../actors/peers/verify-batch.js';
import type { AcquiredBlock } from '../../../net/p2p/acquire.js';
import { fetchHistoryHeaders, fetchHistoryRange, HistoryUnavailableError, type HistoryRangeOptions } from '../../../net/p2p/history-range.js';
import { PeerPool } from '../../../net/p2p/peer-pool.js';
import { decodeEth69Receipts, encodeEth69Receipts } from '../../../net/eth/receipt.js';
import { encodeBlockBody } from '../../../net/eth/block.js';
import { encodeHeader } from '../../../net/eth/header.js';
import type { Hash } from '../../../net/eth/hex.js';
import { generateChain } from '../../../net/devnet/generate-chain.js';
import { resolveDevnetConfig } from '../../../net/devnet/config.js';
import { devnetForkSchedule } from '../../../net/devnet/fork-schedule.js';
import { devnetGenesis } from '../../../net/devnet/genesis.js';
import type { ChainReader } from '../../../net/p2p/serve.js';
import type { ChainIdentity } from '../../../net/p2p/status.js';
import { loadHiveChain, readerOf, type HiveChain, type RawBlock } from './hive-chain.js';
import { client, connect, destroyHosts, servingPeer } from './loopback-peers.js';

let hive: HiveChain;

function options(pool: PeerPool, headersPerRequest = 16): HistoryRangeOptions {
  return {
    pool, timeoutMs: 5000, headersPerRequest,
    verifyBatch: async (batch: readonly AcquiredBlock[]) => batchOutcomes(await verifyBlockMaterials(batch.map(materialInput))),
  };
}

before(async () => {
  hive = await loadHiveChain();
});

after(() => destroyHosts());

describe('history from the peer pool', () => {
  it('fetches a range below the head back byte for byte, every block verified, on the history budget', async () => {
    const enode = await servingPeer(hive.chain, readerOf(hive.blocks), hive.blocks);
    const pool = new PeerPool({ concurrency: 8, windowBlocks: 8, banMs: 60_000 });
    const purposes = new Set<string>();
    const counted = new PeerPool({ concurrency: 8, windowBlocks: 8, banMs: 60_000, onRequest: (_lane, _outcome, _bytes, purpose) => purposes.add(purpose) });
    const session = await connect(client(hive.chain), enode);
    pool.add(session);
    counted.add(session);
    const blocks = await fetchHistoryRange(options(pool), 10, 90, false);
    assert.deepEqual(blocks.map((b) => b.number), Array.from({ length: 81 }, (_, i) => 10 + i));
    for (const block of blocks) {
      const original = hive.blocks[block.number]!;
      assert.equal(block.hash, original.hash);
      assert.deepEqual(block.header, original.header);
      assert.deepEqual(block.body, original.body);
    }
    const headers = await fetchHistoryHeaders(options(counted), 5, 40);
    assert.deepEqual(headers.map((h) => h.hash), hive.blocks.slice(5, 41).map((b) => b.hash));
    assert.deepEqual([...purposes], ['history']);
    assert.equal(pool.counters.bans, 0);
  });

  it('bans a peer serving a tampered body; the range completes from an honest peer', async () => {
    const blocks = hive.blocks.slice(0, 60);
    const target = blocks[30]!.hash;
    const liar = await servingPeer(hive.chain, readerOf(blocks, (hash, body) => (hash === target ? blocks[31]!.body : body)), blocks);
    const honest = await servingPeer(hive.chain, readerOf(blocks), blocks);
    const host = client(hive.chain);
    const pool = new PeerPool({ concurrency: 8, windowBlocks: 4, banMs: 60_000 });
    const liarSession = await connect(host, liar);
    pool.add(liarSession);
    // The liar alone: block 30 fails verification, the liar is banned, and then no peer is left.
    await assert.rejects(fetchHistoryRange(options(pool), 20, 40, false), (error: unknown) => {
      assert.ok(error instanceof HistoryUnavailableError, String(error));
      assert.match(error.message, /block 30|no connected peer/);
      return true;
    });
    assert.equal(pool.counters.bans, 1);
    assert.ok(pool.isBanned(PeerPool.keyOf(liarSession)));
    pool.add(await connect(host, honest));
    const fetched = await fetchHistoryRange(options(pool), 20, 40, false);
    assert.deepEqual(fetched.map((b) => b.hash), blocks.slice(20, 41).map((b) => b.hash));
  });

  it('leaves out a peer announcing a range it does not serve (not banned); with no other peer the block is named', async () => {
    const blocks = hive.blocks.slice(0, 60);
    // Announces 0..59 (eth/69 status) but serves nothing below 30.
    const full = readerOf(blocks);
    const pretender = await servingPeer(hive.chain, { ...full, canonicalHeader: (n) => (n < 30 ? undefined : full.canonicalHeader(n)) }, blocks);
    const honest = await servingPeer(hive.chain, full, blocks);
    const host = client(hive.chain);
    const pool = new PeerPool({ concurrency: 8, windowBlocks: 4, banMs: 60_000 });
    const pretenderSession = await connect(host, pretender);
    pool.add(pretenderSession);
    assert.deepEqual([pretenderSession.range?.earliest, pretenderSession.range?.latest], [0, 59]);
    await assert.rejects(fetchHistoryRange(options(pool), 10, 20, false), (error: unknown) => {
      assert.ok(error instanceof HistoryUnavailableError, String(error));
      assert.equal(error.blockNumber, 10);
      assert.match(error.message, /block 10: no connected peer serves its header \(connected peers announce 0\.\.59\)/);
      return true;
    });
    assert.equal(pool.counters.bans, 0, 'an empty answer is not invalid material');
    pool.add(await connect(host, honest));
    const fetched = await fetchHistoryRange(options(pool), 10, 20, false);
    assert.deepEqual(fetched.map((b) => b.hash), blocks.slice(10, 21).map((b) => b.hash));
    // A range no peer announces is not asked at all.
    await assert.rejects(fetchHistoryRange(options(pool), 50, 70, false), /block 50: no connected peer serves its header/);
  });

  it('the history budget never takes the live head\'s last slot', async () => {
    const enode = await servingPeer(hive.chain, readerOf(hive.blocks), hive.blocks);
    const pool = new PeerPool({ concurrency: 3, windowBlocks: 8, banMs: 60_000, historyConcurrency: 8 });
    pool.add(await connect(client(hive.chain), enode));
    assert.equal(pool.historyConcurrency, 2, 'capped at the ceiling less one');
    const a = await pool.acquire(new Set(), { purpose: 'history' });
    const b = await pool.acquire(new Set(), { purpose: 'history' });
    assert.ok(a && b);
    let third = false;
    const waiting = pool.acquire(new Set(), { purpose: 'history' }).then((session) => { third = true; return session; });
    // The live head still finds its slot while history waits.
    const live = await pool.acquire();
    assert.ok(live);
    assert.equal(third, false, 'a third history request waits');
    pool.release(live, 'headers', 'ok');
    assert.equal(third, false, 'a live slot given back does not admit history past its budget');
    pool.release(a, 'headers', 'ok', 0, 'history');
    const admitted = await waiting;
    assert.ok(admitted && third);
    pool.release(b, 'headers', 'ok', 0, 'history');
    pool.release(admitted, 'headers', 'ok', 0, 'history');
  });

  it('bans a peer serving a tampered receipt (devnet blocks with receipts); the range completes, receipts included, from an honest peer', async () => {
    const input = { transactionsPerBlock: 6, blobTransactionsPerBlock: 0, accounts: 16, reorgEvery: 0 };
    const config = resolveDevnetConfig(input);
    const genesis = devnetGenesis(config);
    const chain: ChainIdentity = { chainId: config.chainId, schedule: devnetForkSchedule(config), genesis: { hash: genesis.hash, timestamp: genesis.header.timestamp } };
    const generated = await generateChain(input, 24);
    const blocks: RawBlock[] = [
      { number: 0, hash: genesis.hash, header: encodeHeader(genesis.header), body: encodeBlockBody({ transactions: [], uncles: [], withdrawals: [] }) },
      ...generated.map((b) => ({ number: b.block.header.number, hash: b.hash, header: encodeHeader(b.block.header), body: encodeBlockBody(b.block) })),
    ];
    const receipts = new Map<Hash, Uint8Array>(generated.map((b) => [b.hash, encodeEth69Receipts(b.receipts)]));
    const target = blocks[12]!.hash;
    const tampered = (() => {
      const list = decodeEth69Receipts(receipts.get(target)!);
      list[0] = { ...list[0]!, cumulativeGasUsed: list[0]!.cumulativeGasUsed + 1n };
      return encodeEth69Receipts(list);
    })();
    const reader = (lie: boolean): ChainReader => ({ ...readerOf(blocks), receiptsByHash: (hash) => (lie && hash === target ? tampered : receipts.get(hash)) });
    const liar = await servingPeer(chain, reader(true), blocks);
    const honest = await servingPeer(chain, reader(false), blocks);
    const host = client(chain);
    const pool = new PeerPool({ concurrency: 8, windowBlocks: 4, banMs: 60_000 });
    const liarSession = await connect(host, liar);
    pool.add(liarSession);
    await assert.rejects(fetchHistoryRange(options(pool), 5, 20, true), (error: unknown) => {
      assert.ok(error instanceof HistoryUnavailableError, String(error));
      assert.match(error.message, /block 12|no connected peer/);
      return true;
    });
    assert.equal(pool.counters.bans, 1, 'the liar is banned');
    assert.ok(pool.isBanned(PeerPool.keyOf(liarSession)));
    pool.add(await connect(host, honest));
    const fetched = await fetchHistoryRange(options(pool), 5, 20, true);
    assert.deepEqual(fetched.map((b) => b.hash), blocks.slice(5, 21).map((b) => b.hash));
    for (const block of fetched) assert.deepEqual(block.receipts, receipts.get(block.hash), `block ${block.number}: the honest receipts`);
  });
});
