/**
 * The bloom check before receipts: a client following a loopback peer that serves a devnet chain (ERC-20 and AMM
 * logs from several contracts) with a log interest in one contract asks for receipts only of the blocks whose
 * verified header bloom may hold it. Every block holding one of its logs is among them (no false negatives) and comes
 * with all of its receipts, verified against the receipts root; the others come verified without receipts, and the
 * peer never saw a receipt request for them.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { once } from 'node:events';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { devnetForkSchedule, devnetGenesis, devnetSteps, resolveDevnetConfig } from '../../../net/devnet/index.js';
import { encodeBlockBody } from '../../../net/eth/block.js';
import { encodeHeader } from '../../../net/eth/header.js';
import type { Hash, Hex } from '../../../net/eth/hex.js';
import { encodeEth69Receipts } from '../../../net/eth/receipt.js';
import { verifyBlockMaterialBytes } from '../../../net/eth/verify-material.js';
import { acquireStep, type AcquiredBlock } from '../../../net/p2p/acquire.js';
import type { BlockRef } from '../../../store/chain-types.js';
import { formatEnode, parseEnode } from '../../../net/p2p/enode.js';
import { rawList } from '../../../net/p2p/eth-messages.js';
import { EthHost } from '../../../net/p2p/host.js';
import { bloomMatches, receiptsWanted, type LogInterest } from '../../../net/p2p/log-interest.js';
import { PeerPool } from '../../../net/p2p/peer-pool.js';
import { chainRequestHandler, type ChainReader } from '../../../net/p2p/serve.js';
import type { EthSession } from '../../../net/p2p/session.js';
import { localStatus, refuseStatus, type ChainIdentity } from '../../../net/p2p/status.js';

interface Served { number: number; hash: Hash; header: Uint8Array; body: Uint8Array; receipts: Uint8Array; logAddresses: Set<Hex>; logsBloom: Hex }

const hosts: EthHost[] = [];
after(() => {
  for (const host of hosts) host.destroy();
});

async function devnetChain(): Promise<{ chain: ChainIdentity; blocks: Served[] }> {
  const config = resolveDevnetConfig({ seed: 'bloom-receipts', transactionsPerBlock: 3, blobTransactionsPerBlock: 0, accounts: 8, reorgEvery: 0, reorgDepth: 1, finalityLag: 2, retainBlocks: 4 });
  const genesis = devnetGenesis(config);
  const blocks: Served[] = [{
    number: 0, hash: genesis.hash, header: encodeHeader(genesis.header), body: rawList([rawList([]), rawList([]), rawList([])]), receipts: rawList([]),
    logAddresses: new Set(), logsBloom: genesis.header.logsBloom,
  }];
  for await (const step of devnetSteps(config, 24)) {
    if (step.kind !== 'block') continue;
    const { block, receipts, hash } = step;
    blocks.push({
      number: block.header.number, hash, header: encodeHeader(block.header), body: encodeBlockBody(block), receipts: encodeEth69Receipts(receipts),
      logAddresses: new Set(receipts.flatMap((r) => r.logs.map((l) => l.address.toLowerCase() as Hex))), logsBloom: block.header.logsBloom,
    });
  }
  return { chain: { chainId: config.chainId, schedule: devnetForkSchedule(config), genesis: { hash: genesis.hash, timestamp: genesis.header.timestamp } }, blocks };
}

describe('bloom check before receipts', () => {
  it('asks for the receipts of bloom-positive blocks only, and those come whole and verified', async () => {
    const { chain, blocks } = await devnetChain();
    const byHash = new Map(blocks.map((b) => [b.hash, b]));
    const receiptRequests = new Set<Hash>();
    const reader: ChainReader = {
      canonicalHeader: (n) => blocks[n]?.header, numberOf: (h) => byHash.get(h)?.number, headerByHash: (h) => byHash.get(h)?.header, bodyByHash: (h) => byHash.get(h)?.body,
      receiptsByHash: (h) => {
        receiptRequests.add(h);
        return byHash.get(h)?.receipts;
      },
    };
    // A contract whose logs are in some blocks but not all.
    const counts = new Map<Hex, number>();
    for (const b of blocks) for (const a of b.logAddresses) counts.set(a, (counts.get(a) ?? 0) + 1);
    const address = [...counts].filter(([, n]) => n > 0 && n < blocks.length - 4).sort((x, y) => x[1] - y[1])[0]?.[0];
    assert.ok(address, 'the devnet chain has a contract with logs in only some blocks');
    const interest: LogInterest = { addresses: [address], topics: [] };
    const positive = blocks.filter((b) => b.number > 0 && bloomMatches({ logsBloom: b.logsBloom }, interest));
    assert.ok(positive.length > 0 && positive.length < blocks.length - 1, `bloom-positive blocks: ${positive.length} of ${blocks.length - 1}`);

    const tip = blocks[blocks.length - 1]!;
    const server = new EthHost({
      privateKey: secp256k1.utils.randomSecretKey(), status: () => localStatus(chain, { number: tip.number, hash: tip.hash, timestamp: Number.MAX_SAFE_INTEGER, earliest: 0 }),
      checkStatus: (remote) => refuseStatus(chain, { number: 0, timestamp: chain.genesis.timestamp }, remote), handler: chainRequestHandler(reader),
      maxPeers: 4, handshakeTimeoutMs: 5000, listen: { host: '127.0.0.1', port: 0 },
    });
    hosts.push(server);
    const client = new EthHost({
      privateKey: secp256k1.utils.randomSecretKey(), status: () => localStatus(chain, { number: 0, hash: chain.genesis.hash, timestamp: chain.genesis.timestamp, earliest: 0 }),
      checkStatus: (remote) => refuseStatus(chain, { number: 0, timestamp: chain.genesis.timestamp }, remote), handler: null, maxPeers: 4, handshakeTimeoutMs: 5000, listen: null,
    });
    hosts.push(client);
    const established = once(client, 'session') as Promise<[EthSession]>;
    await client.dial(parseEnode(formatEnode(server.id, '127.0.0.1', await server.port())));
    const pool = new PeerPool({ concurrency: 8, windowBlocks: 8, banMs: 60_000 });
    pool.add((await established)[0]);

    const fetched: AcquiredBlock[] = [];
    const known = new Set<Hash>([chain.genesis.hash]);
    let local: BlockRef = { number: 0, hash: chain.genesis.hash };
    let verifiedWithReceipts = 0;
    for (;;) {
      const step = await acquireStep({
        pool, local, isKnown: (h) => known.has(h), maxReorgDepth: 16, timeoutMs: 5000, maxHeaders: 64, receiptsFor: receiptsWanted(interest),
        verify: async (block) => {
          verifyBlockMaterialBytes({ header: block.header, body: block.body, receipts: block.receipts, expectedHash: block.hash });
          if (block.receipts) verifiedWithReceipts++;
        },
      });
      for (const b of step.branch) known.add(b.hash);
      fetched.push(...step.branch);
      local = step.head;
      if (!step.behind) break;
    }
    assert.equal(local.hash, tip.hash);
    assert.equal(fetched.length, blocks.length - 1);
    const positiveHashes = new Set(positive.map((b) => b.hash));
    assert.deepEqual([...receiptRequests].filter((h) => h !== chain.genesis.hash).sort(), [...positiveHashes].sort());
    for (const block of fetched) {
      const served = byHash.get(block.hash)!;
      if (served.logAddresses.has(address)) assert.ok(positiveHashes.has(block.hash), `block ${block.number} holds a log of ${address}`);
      if (positiveHashes.has(block.hash)) assert.deepEqual(block.receipts, served.receipts);
      else assert.equal(block.receipts, null);
      assert.deepEqual(block.body, served.body);
    }
    assert.equal(verifiedWithReceipts, positive.length);
  });
});
