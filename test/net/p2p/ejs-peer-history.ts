/**
 * Runs inside a network namespace of its own (`unshare -n`, started by `ejs-client-interop.test.ts`; see
 * ejs-peer-follow.ts for why). `@ethereumjs/client` seals its Clique PoA dev chain (ejs-dev-peer.ts); once it has
 * sealed block `TOP`, that block is fetched and verified and recorded as a fresh node's live lane records its first
 * block, and then the history lane's own code backfills 0..TOP−1 below it from the client alone: the `p2p` history
 * source (actors/history/p2p-source.ts) asking the peers lane's answers (actors/peers/history-answers.ts) over a pool
 * holding the client's session, the header walk proving every hash down from the recorded block, every block
 * verified whole with its receipts, recorded with its proven link (actors/history/anchor.ts fetchProvenChunk).
 * Prints one JSON line with what the store then holds, and stops the client.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchProvenChunk } from '../../../actors/history/anchor.js';
import { p2pSource } from '../../../actors/history/p2p-source.js';
import type { AskPeers } from '../../../actors/history/sources.js';
import { verifyBlockMaterials } from '../../../actors/node/tasks.js';
import { answerHistoryAsk } from '../../../actors/peers/history-answers.js';
import { batchOutcomes, materialInput } from '../../../actors/peers/verify-batch.js';
import { decodeHeader } from '../../../net/eth/header.js';
import { hexToBytes } from '../../../net/eth/hex.js';
import type { AcquiredBlock } from '../../../net/p2p/acquire.js';
import { fetchHistoryRange } from '../../../net/p2p/history-range.js';
import { PeerPool } from '../../../net/p2p/peer-pool.js';
import { getBodyBytes, getReceiptsBytes, putBlockMaterial } from '../../../store/chain-material.js';
import { readHistoryLink } from '../../../store/history-canonical.js';
import { u64Key } from '../../../store/keys.js';
import { openStore } from '../../../store/store.js';
import { startEjsDevPeer } from './ejs-dev-peer.js';

const TOP = Number(process.argv[2] ?? '3');

async function main(): Promise<Record<string, unknown>> {
  const cli = process.argv[3];
  if (!cli) throw new Error('usage: ejs-peer-history.js <top block> <path of @ethereumjs/client\'s cli.js>');
  const peer = startEjsDevPeer(cli);
  const dataDir = mkdtempSync(join(tmpdir(), 'cdn-ejs-history-'));
  const store = openStore({ dataDir, chainId: peer.chain.chainId });
  try {
    const session = await peer.connect();
    await peer.reach(session, TOP);
    const pool = new PeerPool({ concurrency: 4, windowBlocks: 8, banMs: 60_000 });
    pool.add(session);
    const options = { pool, timeoutMs: 10_000, verifyBatch: async (batch: readonly AcquiredBlock[]) => batchOutcomes(await verifyBlockMaterials(batch.map(materialInput))) };
    // The recorded chain: block TOP, verified, as the live lane records the first block it follows.
    const [top] = await fetchHistoryRange(options, TOP, TOP, true);
    await store.write(() => {
      putBlockMaterial(store, { number: top!.number, hash: hexToBytes(top!.hash, 32), header: top!.header, body: top!.body, receipts: top!.receipts });
      store.chain.canonical.put(u64Key(TOP), Buffer.from(hexToBytes(top!.hash, 32)));
    });
    const askPeers: AskPeers = (message) => answerHistoryAsk(pool, options, message);
    const source = p2pSource({
      id: 'peers', kind: 'p2p', concurrency: 2, url: '', batchBlocks: 2, requestTimeoutMs: 10_000, maxRetries: 1,
      backoffInitialMs: 500, backoffMaxMs: 500, pooledBlobRoots: false, encoding: 'auto',
    }, store, new AbortController().signal, askPeers);
    const refs = await fetchProvenChunk(store, [source], { from: 0, to: TOP - 1 }, { belowFallback: () => null, signal: new AbortController().signal, stopping: () => false });
    const blocks = refs.map((ref) => {
      const key = hexToBytes(ref.hash, 32);
      const link = readHistoryLink(store, ref.number);
      return {
        number: ref.number, hash: ref.hash, linkHash: link?.hash ?? null, parentHash: link?.parentHash ?? null,
        body: getBodyBytes(store, key, ref.number) !== undefined, receipts: getReceiptsBytes(store, key, ref.number) !== undefined,
      };
    });
    return {
      ok: true, genesis: peer.chain.genesis.hash, top: { number: TOP, hash: top!.hash, parentHash: decodeHeader(top!.header).parentHash }, blocks,
      bans: pool.counters.bans, probe: await source.probe(peer.chain.chainId),
    };
  } finally {
    peer.stop();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then((result) => {
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
}, (error: unknown) => {
  process.stdout.write(`${JSON.stringify({ ok: false, error: (error as Error).message })}\n`, () => process.exit(1));
});
