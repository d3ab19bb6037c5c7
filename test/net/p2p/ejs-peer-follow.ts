/**
 * Runs inside a network namespace of its own (`unshare -n`, started by `ejs-client-interop.test.ts`): the
 * `@ethereumjs/client` binds its RLPx listener to 0.0.0.0 with no option to change it, and in a fresh namespace the
 * only interface is loopback, so nothing is reachable from outside. Starts that client as a Clique PoA (London) dev
 * chain sealed by a fixed key (ejs-dev-peer.ts), connects to it with the node's RLPx host, qualifies
 * the session against the genesis header, waits until the peer has sealed `WANT` blocks (polling the peer itself),
 * fetches them with the peer lane's acquisition code and verifies each whole (hash, roots, bloom, gas; eth/68
 * receipts). Prints one JSON line with what it saw, then stops the client.
 */
import { decodeHeader, encodeHeader } from '../../../net/eth/header.js';
import type { Hash } from '../../../net/eth/hex.js';
import { verifyBlockMaterialBytes } from '../../../net/eth/verify-material.js';
import { acquireStep, fetchHeaderByHash, type AcquiredBlock } from '../../../net/p2p/acquire.js';
import type { BlockRef } from '../../../store/chain-types.js';
import { PeerPool } from '../../../net/p2p/peer-pool.js';
import { startEjsDevPeer } from './ejs-dev-peer.js';

const WANT = Number(process.argv[2] ?? '2');

async function main(): Promise<Record<string, unknown>> {
  const cli = process.argv[3];
  if (!cli) throw new Error('usage: ejs-peer-follow.js <blocks> <path of @ethereumjs/client\'s cli.js>');
  const peer = startEjsDevPeer(cli);
  const { chain, genesis: built } = peer;
  try {
    const session = await peer.connect();
    const remote = session.remoteStatus!;
    const anchor = await fetchHeaderByHash(session, chain.genesis.hash, 10_000);
    const qualified = anchor !== null && Buffer.from(anchor).equals(Buffer.from(encodeHeader(built.header)));
    await peer.reach(session, WANT);
    const pool = new PeerPool({ concurrency: 4, windowBlocks: 8, banMs: 60_000 });
    pool.add(session);
    const known = new Set<Hash>([chain.genesis.hash]);
    let local: BlockRef = { number: 0, hash: chain.genesis.hash };
    const fetched: AcquiredBlock[] = [];
    while (local.number < WANT) {
      const step = await acquireStep({
        pool, local, isKnown: (hash) => known.has(hash), maxReorgDepth: 8, timeoutMs: 10_000, maxHeaders: WANT - local.number,
        verify: async (block) => {
          verifyBlockMaterialBytes({ header: block.header, body: block.body, receipts: block.receipts, expectedHash: block.hash });
        },
      });
      for (const block of step.branch) known.add(block.hash);
      fetched.push(...step.branch);
      local = step.head;
    }
    return {
      ok: true, version: session.version, remoteNetworkId: remote.networkId.toString(), remoteGenesis: remote.genesis, genesis: chain.genesis.hash, qualified,
      bans: pool.counters.bans,
      blocks: fetched.map((block) => {
        const header = decodeHeader(block.header);
        return { number: block.number, hash: block.hash, parentHash: header.parentHash, difficulty: header.difficulty.toString(), extraDataBytes: (header.extraData.length - 2) / 2, receipts: block.receipts?.length ?? null, baseFee: header.baseFeePerGas?.toString() ?? null };
      }),
    };
  } finally {
    peer.stop();
  }
}

main().then((result) => {
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
}, (error: unknown) => {
  process.stdout.write(`${JSON.stringify({ ok: false, error: (error as Error).message })}\n`, () => process.exit(1));
});
