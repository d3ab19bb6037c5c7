/**
 * Two RLPx hosts on loopback: a peer serving the hive `eth` test chain, a client fetching it back through the peer
 * pool with every block verified. Also: eth/68 sessions, a peer serving a tampered body is banned while another keeps
 * the lane going, a wrong genesis is refused at the handshake, unknown messages are counted and never crash a session.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { once } from 'node:events';
import type { Hash } from '../../../net/eth/hex.js';
import { verifyBlockMaterialBytes } from '../../../net/eth/verify-material.js';
import { acquireStep, type AcquiredBlock, type HeadersAhead } from '../../../net/p2p/acquire.js';
import type { BlockRef } from '../../../store/chain-types.js';
import { parseEnode } from '../../../net/p2p/enode.js';
import { PeerPool } from '../../../net/p2p/peer-pool.js';
import type { EthSession } from '../../../net/p2p/session.js';
import type { ChainIdentity } from '../../../net/p2p/status.js';
import { verifyBlockMaterials } from '../../../actors/node/tasks.js';
import { batchOutcomes, materialInput } from '../../../actors/peers/verify-batch.js';
import { loadHiveChain, readerOf, type HiveChain } from './hive-chain.js';
import { client, connect, destroyHosts, newestHost, servingPeer } from './loopback-peers.js';

let hive: HiveChain;

/** Steps until caught up, each passing on the headers the previous one asked for ahead; counts the steps that did. */
async function follow(pool: PeerPool, known: Map<Hash, number>, from: BlockRef): Promise<{ fetched: AcquiredBlock[]; head: BlockRef; stepsWithAhead: number }> {
  const fetched: AcquiredBlock[] = [];
  let local = from;
  let ahead: HeadersAhead | null = null;
  let stepsWithAhead = 0;
  for (;;) {
    const step = await acquireStep({
      pool, local, isKnown: (hash) => known.has(hash), maxReorgDepth: 64, timeoutMs: 5000, maxHeaders: 128, receipts: false, ahead,
      verify: async (block) => {
        verifyBlockMaterialBytes({ header: block.header, body: block.body, expectedHash: block.hash });
      },
    });
    for (const block of step.branch) known.set(block.hash, block.number);
    fetched.push(...step.branch);
    local = step.head;
    if (step.ahead) {
      assert.deepEqual(step.ahead.after, step.head, 'headers asked ahead follow the new head');
      stepsWithAhead++;
    }
    ahead = step.ahead;
    if (!step.behind) return { fetched, head: local, stepsWithAhead };
  }
}

before(async () => {
  hive = await loadHiveChain();
});

after(() => destroyHosts());

describe('RLPx eth sessions on loopback', () => {
  it('fetches the whole hive chain back byte for byte over eth/69, every block verified', async () => {
    const enode = await servingPeer(hive.chain, readerOf(hive.blocks), hive.blocks);
    const host = client(hive.chain);
    const session = await connect(host, enode);
    assert.equal(session.version, 69);
    assert.equal(session.range?.latest, hive.blocks.length - 1);
    const pool = new PeerPool({ concurrency: 32, windowBlocks: 8, banMs: 60_000 });
    pool.add(session);
    const known = new Map<Hash, number>([[hive.chain.genesis.hash, 0]]);
    const { fetched, head, stepsWithAhead } = await follow(pool, known, { number: 0, hash: hive.chain.genesis.hash });
    assert.equal(head.number, hive.blocks.length - 1);
    assert.ok(stepsWithAhead >= 1, 'the next step\'s headers were asked for while a step fetched its bodies');
    assert.equal(fetched.length, hive.blocks.length - 1);
    for (const block of fetched) {
      const original = hive.blocks[block.number]!;
      assert.equal(block.hash, original.hash);
      assert.deepEqual(block.header, original.header);
      assert.deepEqual(block.body, original.body);
    }
    assert.equal(pool.counters.bans, 0);
  });

  it('speaks eth/68 with a peer that offers only eth/68', async () => {
    const blocks = hive.blocks.slice(0, 40);
    const enode = await servingPeer(hive.chain, readerOf(blocks), blocks, [68]);
    const session = await connect(client(hive.chain), enode);
    assert.equal(session.version, 68);
    const pool = new PeerPool({ concurrency: 8, windowBlocks: 8, banMs: 60_000 });
    pool.add(session);
    const { head } = await follow(pool, new Map([[hive.chain.genesis.hash, 0]]), { number: 0, hash: hive.chain.genesis.hash });
    assert.equal(head.number, 39);
  });

  it('bans a peer serving a tampered body; an honest peer keeps the lane going', async () => {
    const blocks = hive.blocks.slice(0, 60);
    const target = blocks[30]!.hash;
    const liar = await servingPeer(hive.chain, readerOf(blocks, (hash, body) => (hash === target ? blocks[31]!.body : body)), blocks);
    const honest = await servingPeer(hive.chain, readerOf(blocks), blocks);
    const host = client(hive.chain);
    const pool = new PeerPool({ concurrency: 8, windowBlocks: 4, banMs: 60_000 });
    const liarSession = await connect(host, liar);
    pool.add(liarSession);
    const known = new Map<Hash, number>([[hive.chain.genesis.hash, 0]]);
    let local: BlockRef = { number: 0, hash: hive.chain.genesis.hash };
    let failures = 0;
    // The liar alone: the step fails on block 30, the liar is banned and disconnected.
    while (pool.size > 0) {
      try {
        const step = await acquireStep({ pool, local, isKnown: (h) => known.has(h), maxReorgDepth: 64, timeoutMs: 5000, maxHeaders: 16, receipts: false, verify: async (b) => { verifyBlockMaterialBytes({ header: b.header, body: b.body, expectedHash: b.hash }); } });
        for (const block of step.branch) known.set(block.hash, block.number);
        local = step.head;
      } catch (error) {
        failures++;
        assert.match((error as Error).message, /failed verification: transactionsRoot|no qualified peer/);
      }
    }
    assert.ok(failures >= 1);
    assert.equal(pool.counters.bans, 1);
    assert.ok(pool.isBanned(PeerPool.keyOf(liarSession)));
    assert.ok(local.number < 30, 'nothing at or above the tampered block was accepted');
    pool.add(await connect(host, honest));
    const { head } = await follow(pool, known, local);
    assert.equal(head.number, 59);
  });

  it('verifying in batches (one pool task per answer): the tampered block fails in its place, its peer is banned, an honest peer completes the chain', async () => {
    const blocks = hive.blocks.slice(0, 60);
    const target = blocks[30]!.hash;
    const liar = await servingPeer(hive.chain, readerOf(blocks, (hash, body) => (hash === target ? blocks[31]!.body : body)), blocks);
    const honest = await servingPeer(hive.chain, readerOf(blocks), blocks);
    const host = client(hive.chain);
    const pool = new PeerPool({ concurrency: 8, windowBlocks: 4, banMs: 60_000 });
    const liarSession = await connect(host, liar);
    pool.add(liarSession);
    const known = new Map<Hash, number>([[hive.chain.genesis.hash, 0]]);
    let local: BlockRef = { number: 0, hash: hive.chain.genesis.hash };
    const batchSizes: number[] = [];
    const options = {
      isKnown: (h: Hash) => known.has(h), maxReorgDepth: 64, timeoutMs: 5000, maxHeaders: 16, receipts: false,
      verify: async () => { throw new Error('verify is not used when verifyBatch is given'); },
      verifyBatch: async (batch: readonly AcquiredBlock[]) => {
        batchSizes.push(batch.length);
        return batchOutcomes(await verifyBlockMaterials(batch.map(materialInput)));
      },
    };
    let failure = '';
    while (pool.size > 0) {
      try {
        const step = await acquireStep({ ...options, pool, local });
        for (const block of step.branch) known.set(block.hash, block.number);
        local = step.head;
      } catch (error) {
        failure ||= (error as Error).message;
      }
    }
    assert.match(failure, /block 30 from a peer failed verification: .*transactionsRoot/);
    assert.equal(pool.counters.bans, 1);
    assert.ok(pool.isBanned(PeerPool.keyOf(liarSession)));
    assert.ok(local.number < 30, 'nothing at or above the tampered block was accepted');
    assert.ok(batchSizes.some((size) => size > 1), `blocks were verified in batches (sizes ${batchSizes.join(',')})`);
    pool.add(await connect(host, honest));
    while (local.number < 59) {
      const step = await acquireStep({ ...options, pool, local });
      for (const block of step.branch) known.set(block.hash, block.number);
      local = step.head;
    }
    assert.equal(local.hash, blocks[59]!.hash);
  });

  it('refuses a peer of another genesis at the handshake', async () => {
    const other: ChainIdentity = { ...hive.chain, genesis: { ...hive.chain.genesis, hash: `0x${'ab'.repeat(32)}` } };
    const enode = await servingPeer(other, readerOf(hive.blocks), hive.blocks);
    const host = client(hive.chain);
    const failed = once(host, 'handshake:failed') as Promise<[string]>;
    await host.dial(parseEnode(enode));
    const [reason] = await failed;
    assert.match(reason, /genesis/);
    assert.equal(host.sessionCount, 0);
  });

  it('counts unknown and malformed messages without dropping the session', async () => {
    const blocks = hive.blocks.slice(0, 5);
    const enode = await servingPeer(hive.chain, readerOf(blocks), blocks);
    const server = newestHost();
    const served = once(server, 'session') as Promise<[EthSession]>;
    const session = await connect(client(hive.chain), enode);
    const [peerSide] = await served;
    // Our side sends junk to the peer: an unknown code and a malformed GetBlockHeaders; the peer counts and carries on.
    session.protocol.send(0x0d, Uint8Array.of(0xc0));
    session.protocol.send(0x03, Uint8Array.of(0xc3, 0x01, 0x02));
    const headers = await session.getBlockHeaders({ number: 1 }, 2, 0, false, 5000);
    assert.equal(headers.items.length, 2);
    assert.equal(peerSide.counters.unknown, 1);
    assert.equal(peerSide.counters.malformed, 1);
    assert.equal(peerSide.isClosed, false);
  });
});
