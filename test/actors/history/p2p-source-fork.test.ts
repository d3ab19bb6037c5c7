/**
 * The `p2p` history source (actors/history/p2p-source.ts) with a peer on a fork, over real RLPx sessions on loopback
 * answered as the peers lane answers them (actors/peers/history-answers.ts). Asked by number, a forked peer serves
 * its own chain; when the history lane names the proven hash of the range's top, the source sees the answer is not
 * that chain and asks again by hash: with only the forked peer it fails naming the block and why, with a canonical
 * peer beside it the range (and the anchoring walk's headers) come back canonical, the forked peer neither trusted
 * nor banned. The same through the history lane's chunk path (anchor.ts fetchProvenChunk) below a recorded block:
 * the header walk and the blocks are the canonical chain, where asked by number alone they were the fork's.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answerHistoryAsk } from '../../../actors/peers/history-answers.js';
import { batchOutcomes, materialInput } from '../../../actors/peers/verify-batch.js';
import { fetchProvenChunk } from '../../../actors/history/anchor.js';
import { p2pSource } from '../../../actors/history/p2p-source.js';
import type { AskPeers, HistorySourceArgs } from '../../../actors/history/sources.js';
import { verifyBlockMaterials } from '../../../actors/node/tasks.js';
import type { AcquiredBlock } from '../../../net/p2p/acquire.js';
import { HistoryBlockError } from '../../../net/history/history-block.js';
import { PeerPool } from '../../../net/p2p/peer-pool.js';
import { openStore, type Store } from '../../../store/store.js';
import { putBlockMaterial } from '../../../store/chain-material.js';
import { readHistoryLink } from '../../../store/history-canonical.js';
import { u64Key } from '../../../store/keys.js';
import { hexToBytes } from '../../../net/eth/hex.js';
import { client, connect, destroyHosts, servingPeer } from '../../net/p2p/loopback-peers.js';
import { forkedDevnetChains, type PeerChain } from '../../net/p2p/devnet-chains.js';

const ARGS: HistorySourceArgs = {
  id: 'peers', kind: 'p2p', concurrency: 2, url: '', batchBlocks: 6, requestTimeoutMs: 5000, maxRetries: 0,
  backoffInitialMs: 10, backoffMaxMs: 10, pooledBlobRoots: false, encoding: 'auto',
};

let canonical: PeerChain;
let fork: PeerChain;
let store: Store;
let dataDir: string;

before(async () => {
  ({ canonical, fork } = await forkedDevnetChains(30));
  dataDir = mkdtempSync(join(tmpdir(), 'p2p-source-fork-'));
  store = openStore({ dataDir, chainId: canonical.identity.chainId });
});

after(async () => {
  destroyHosts();
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test('a peer on a fork is left out of a range whose proven top hash the lane names; the range comes canonical from another peer', async () => {
  const pool = new PeerPool({ concurrency: 8, windowBlocks: 4, banMs: 60_000 });
  const options = { pool, timeoutMs: 5000, headersPerRequest: 8, verifyBatch: async (batch: readonly AcquiredBlock[]) => batchOutcomes(await verifyBlockMaterials(batch.map(materialInput))) };
  const askPeers: AskPeers = (message) => answerHistoryAsk(pool, options, message);
  const source = p2pSource(ARGS, store, new AbortController().signal, askPeers);
  const host = client(canonical.identity);
  pool.add(await connect(host, await servingPeer(fork.identity, fork.reader, fork.blocks)));

  // Without a proven hash the source answers what the peers serve by number: the fork.
  assert.deepEqual((await source.fetchRange(5, 20)).map((b) => b.hash), fork.blocks.slice(5, 21).map((b) => b.hash));
  // With the proven top hash, the fork is not taken: asked by hash, no connected peer holds the canonical chain.
  const top = canonical.blocks[20]!.hash;
  await assert.rejects(source.fetchRange(5, 20, top), (error: unknown) => {
    assert.ok(error instanceof HistoryBlockError, String(error));
    assert.equal(error.blockNumber, 20);
    assert.match(error.reason, /^no connected peer serves the canonical header 0x[0-9a-f]{64} \(peers on another branch are left out; connected peers announce 0\.\.30\)$/);
    return true;
  });

  pool.add(await connect(host, await servingPeer(canonical.identity, canonical.reader, canonical.blocks)));
  for (let round = 0; round < 3; round += 1) {
    const blocks = await source.fetchRange(5, 20, top);
    assert.deepEqual(blocks.map((b) => b.hash), canonical.blocks.slice(5, 21).map((b) => b.hash));
    for (const block of blocks) assert.deepEqual(block.material.receipts, canonical.receipts.get(block.hash), `block ${block.number}: canonical receipts`);
  }
  const links = await source.fetchHeaders(1, 14, canonical.blocks[14]!.hash);
  assert.deepEqual(links.map((l) => l.hash), canonical.blocks.slice(1, 15).map((b) => b.hash));
  assert.equal(pool.counters.bans, 0, 'a peer on another branch is not banned');
});

test('the history lane backfills below its recorded chain through the p2p source with a forked peer connected: the walk and the blocks are the canonical chain', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'p2p-source-fork-lane-'));
  const laneStore = openStore({ dataDir: dir, chainId: canonical.identity.chainId });
  try {
    // The recorded chain begins at canonical block 30 (as a node that started following there).
    const top = canonical.blocks[30]!;
    await laneStore.write(() => {
      putBlockMaterial(laneStore, { number: 30, hash: hexToBytes(top.hash, 32), header: top.header, body: top.body, receipts: canonical.receipts.get(top.hash)! });
      laneStore.chain.canonical.put(u64Key(30), Buffer.from(hexToBytes(top.hash, 32)));
    });
    const pool = new PeerPool({ concurrency: 8, windowBlocks: 4, banMs: 60_000 });
    const options = { pool, timeoutMs: 5000, headersPerRequest: 8, verifyBatch: async (batch: readonly AcquiredBlock[]) => batchOutcomes(await verifyBlockMaterials(batch.map(materialInput))) };
    const source = p2pSource(ARGS, laneStore, new AbortController().signal, (message) => answerHistoryAsk(pool, options, message));
    const host = client(canonical.identity);
    pool.add(await connect(host, await servingPeer(fork.identity, fork.reader, fork.blocks)));
    const chunk = { from: 10, to: 29 };
    const run = () => fetchProvenChunk(laneStore, [source], chunk, { belowFallback: () => null, signal: new AbortController().signal, stopping: () => false });
    // Only the forked peer: the walk down from block 30 asks by the proven hash and nobody holds it (not "not canonical").
    await assert.rejects(run(), (error: unknown) => error instanceof HistoryBlockError && /no connected peer serves the canonical header/.test(error.reason));
    assert.equal(readHistoryLink(laneStore, 29), undefined, 'nothing of the fork recorded');
    pool.add(await connect(host, await servingPeer(canonical.identity, canonical.reader, canonical.blocks)));
    const refs = await run();
    assert.deepEqual(refs.map((r) => r.hash), canonical.blocks.slice(10, 30).map((b) => b.hash));
    for (let n = 10; n <= 29; n += 1) assert.equal(readHistoryLink(laneStore, n)?.hash, canonical.blocks[n]!.hash);
    assert.equal(pool.counters.bans, 0);
  } finally {
    await laneStore.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
