/**
 * Runs inside a network namespace of its own (`unshare -n`, started by `ejs-client-interop.test.ts`): the
 * `@ethereumjs/client` binds its RLPx listener to 0.0.0.0 with no option to change it, and in a fresh namespace the
 * only interface is loopback, so nothing is reachable from outside. Starts that client as a Clique PoA (London) dev
 * chain sealed by a fixed key (so its genesis is known here), connects to it with the node's RLPx host, qualifies
 * the session against the genesis header, waits until the peer has sealed `WANT` blocks (polling the peer itself),
 * fetches them with the peer lane's acquisition code and verifies each whole (hash, roots, bloom, gas; eth/68
 * receipts). Prints one JSON line with what it saw, then stops the client.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { buildGenesisBlock } from '../../../net/eth/genesis-state.js';
import { parseGethGenesis } from '../../../net/eth/genesis.js';
import { decodeHeader, encodeHeader } from '../../../net/eth/header.js';
import type { Hash } from '../../../net/eth/hex.js';
import { privateKeyToAddress } from '../../../net/eth/signature.js';
import { verifyBlockMaterialBytes } from '../../../net/eth/verify-material.js';
import { acquireStep, fetchHeaderByHash, type AcquiredBlock } from '../../../net/p2p/acquire.js';
import type { BlockRef } from '../../../store/chain-types.js';
import { parseEnode } from '../../../net/p2p/enode.js';
import { EthHost } from '../../../net/p2p/host.js';
import { PeerPool } from '../../../net/p2p/peer-pool.js';
import type { EthSession } from '../../../net/p2p/session.js';
import { localStatus, refuseStatus, type ChainIdentity } from '../../../net/p2p/status.js';
import { clientEnode } from '../../support/ejs-client.js';

const WANT = Number(process.argv[2] ?? '2');
const KEY = '9fe4dfbfde7fd1df8a5d9177c4e10d9c0f79860f36cd2cf12f147fa42969b30e';

/** The genesis `ethereumjs --dev=poa` builds for a prefunded sealer (its setupDevnet, as of 0.10.5). */
function devGenesis(address: string): unknown {
  const addr = address.slice(2).toLowerCase();
  return {
    config: {
      chainId: 123456, homesteadBlock: 0, eip150Block: 0, eip155Block: 0, eip158Block: 0, byzantiumBlock: 0, constantinopleBlock: 0,
      petersburgBlock: 0, istanbulBlock: 0, berlinBlock: 0, londonBlock: 0, clique: { period: 10, epoch: 30000 },
    },
    nonce: '0x0', timestamp: '0x614b3731', gasLimit: '0x47b760', difficulty: '0x1', mixHash: `0x${'0'.repeat(64)}`, coinbase: `0x${'0'.repeat(40)}`,
    number: '0x0', gasUsed: '0x0', parentHash: `0x${'0'.repeat(64)}`, baseFeePerGas: '0x7',
    extraData: `0x${'0'.repeat(64)}${addr}${'0'.repeat(130)}`, alloc: { [addr]: { balance: '0x10000000000000000000' } },
  };
}

async function main(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-ejs-'));
  const keyFile = join(dir, 'key');
  writeFileSync(keyFile, KEY);
  const address = privateKeyToAddress(`0x${KEY}`);
  const genesis = parseGethGenesis(devGenesis(address));
  const built = buildGenesisBlock(genesis);
  const chain: ChainIdentity = { chainId: Number(genesis.chainId), schedule: genesis.schedule, genesis: { hash: built.hash, timestamp: built.header.timestamp } };
  const cli = process.argv[3];
  if (!cli) throw new Error('usage: ejs-peer-follow.js <blocks> <path of @ethereumjs/client\'s cli.js>');
  const child = spawn(process.execPath, [cli, '--dev=poa', `--unlock=${keyFile}`, '--port=30303', '--discV4=false', '--discDns=false', '--extIP=127.0.0.1', `--dataDir=${join(dir, 'data')}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  const client = new EthHost({
    privateKey: secp256k1.utils.randomSecretKey(), status: () => localStatus(chain, { number: 0, hash: chain.genesis.hash, timestamp: chain.genesis.timestamp, earliest: 0 }),
    checkStatus: (remote) => refuseStatus(chain, { number: 0, timestamp: chain.genesis.timestamp }, remote), handler: null, maxPeers: 2, handshakeTimeoutMs: 10_000, listen: null,
  });
  const refusals: string[] = [];
  client.on('handshake:failed', (reason) => refusals.push(reason));
  try {
    const enode = await clientEnode(child, 'RLPx listener');
    const established = new Promise<EthSession>((resolve, reject) => {
      client.once('session', resolve);
      client.once('handshake:failed', (reason) => reject(new Error(`handshake refused: ${reason}`)));
    });
    await client.dial(parseEnode(enode));
    const session = await established;
    const remote = session.remoteStatus!;
    const anchor = await fetchHeaderByHash(session, chain.genesis.hash, 10_000);
    const qualified = anchor !== null && Buffer.from(anchor).equals(Buffer.from(encodeHeader(built.header)));
    // Wait for the peer's chain to reach WANT blocks (its Clique period is 10 s), asking the peer itself.
    const deadline = Date.now() + 30_000 * WANT;
    for (;;) {
      const answer = await session.getBlockHeaders({ number: WANT }, 1, 0, false, 10_000);
      if (answer.items.length > 0) break;
      if (Date.now() > deadline) throw new Error(`the peer did not reach block ${WANT}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
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
    client.destroy();
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then((result) => {
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
}, (error: unknown) => {
  process.stdout.write(`${JSON.stringify({ ok: false, error: (error as Error).message })}\n`, () => process.exit(1));
});
