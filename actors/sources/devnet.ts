/**
 * Lane `source`, kind `devnet`: produces the deterministic devnet chain (net/devnet) on a timer,
 * verifies every block on the CPU pool like any other source's material, records it, and
 * announces the new head to `chain`. On restart it replays the chain from the seed to the stored
 * canonical head, so it continues exactly where it was.
 *
 * Accepts: ask `finalized` → {number, hash} (the devnet's own finality, for the finality lane).
 * Sends: HeadNotice to `chain`.
 */
import { defineActor, type ActorContext } from '../../runtime/actor.js';
import { errorFields } from '../../runtime/log.js';
import { createDevnet, type Devnet, type DevnetBlock, type DevnetConfigInput } from '../../net/devnet/index.js';

import { openStore, type Store } from '../../store/env.js';
import { recordBlocks, type BlockMaterial } from '../../store/chain-material.js';
import { decodeU64KeyAsNumber } from '../../store/keys.js';
import type { HeadNotice } from '../chain-messages.js';
import { toMaterial } from './material.js';
import { hexToBytes } from '../../net/eth/hex.js';
import { startDevnetPeer, type DevnetPeer } from '../../net/devnet/p2p-server.js';
import type { ChainIdentity } from '../../net/p2p/status.js';
import { getCanonicalHash } from '../../store/chain-material.js';
import { storeChainReader } from '../peers/store-chain-reader.js';

export interface DevnetSourceArgs {
  readonly dataDir: string;
  readonly devnet: DevnetConfigInput;
  /** Serve the chain as an RLPx/eth peer on this address (`[devnet] p2p_listen`); null: off. */
  readonly p2p?: { readonly host: string; readonly port: number; readonly chain: ChainIdentity } | null;
}

interface State {
  readonly store: Store;
  readonly devnet: Devnet;
  timer: NodeJS.Timeout | null;
  producing: boolean;
  peer: DevnetPeer | null;
}

function material(block: DevnetBlock): BlockMaterial {
  return toMaterial({ header: block.block.header, hash: block.hash, body: block.block, receipts: block.receipts });
}

async function verifyAndRecord(ctx: ActorContext<DevnetSourceArgs>, store: Store, blocks: readonly DevnetBlock[]): Promise<void> {
  const materials = blocks.map(material);
  await Promise.all(materials.map((m, i) => ctx.runTask('verifyBlockMaterial', { header: m.header, body: m.body, receipts: m.receipts, expectedHash: blocks[i]!.hash })));
  await recordBlocks(store, materials);
}

function storedHead(store: Store): number | null {
  for (const key of store.chain.canonical.getKeys({ reverse: true, limit: 1 })) return decodeU64KeyAsNumber(key);
  return null;
}

async function announce(ctx: ActorContext<DevnetSourceArgs>, block: DevnetBlock): Promise<void> {
  const notice: HeadNotice = { type: 'head', number: block.block.header.number, hash: block.hash };
  await ctx.send('chain', notice);
}

async function produce(ctx: ActorContext<DevnetSourceArgs>, state: State): Promise<void> {
  if (state.producing) return;
  state.producing = true;
  try {
    const step = await state.devnet.next();
    const blocks = step.kind === 'block' ? [step] : step.blocks;
    await verifyAndRecord(ctx, state.store, blocks);
    if (step.kind === 'reorg') ctx.log.info('devnet reorg', { depth: step.depth, forkPoint: step.forkPoint.number });
    await announce(ctx, blocks[blocks.length - 1]!);
    const tip = blocks[blocks.length - 1]!;
    state.peer?.announce({ number: tip.block.header.number, hash: tip.hash });
  } finally {
    state.producing = false;
  }
}

export default defineActor<State, DevnetSourceArgs>({
  async init(ctx) {
    const store = openStore({ dataDir: ctx.args.dataDir });
    const devnet = createDevnet(ctx.args.devnet);
    const resumeAt = storedHead(store);
    if (resumeAt !== null && resumeAt > 0) {
      ctx.log.info('replaying the devnet to the stored head', { head: resumeAt });
      await devnet.advanceTo(resumeAt);
    }
    await verifyAndRecord(ctx, store, [devnet.genesis]);
    const head = devnet.blockByNumber(devnet.head().number) ?? devnet.genesis;
    if (resumeAt === null) await announce(ctx, devnet.genesis);
    else if (head.hash !== devnet.genesis.hash) await announce(ctx, head);
    const state: State = { store, devnet, timer: null, producing: false, peer: null };
    if (ctx.args.p2p) {
      const { host, port, chain } = ctx.args.p2p;
      const reader = storeChainReader(store, (number) => {
        if (number > devnet.head().number) return undefined;
        const block = devnet.blockByNumber(number);
        return block ? hexToBytes(block.hash, 32) : getCanonicalHash(store, number);
      });
      const head = () => {
        const ref = devnet.head();
        const block = devnet.blockByNumber(ref.number);
        return { number: ref.number, hash: ref.hash, timestamp: block?.block.header.timestamp ?? 0 };
      };
      state.peer = await startDevnetPeer({ seed: String(devnet.config.seed), chain, reader, head, host, port });
      ctx.log.info('serving the devnet over RLPx (eth/69, eth/68)', { enode: state.peer.enode });
    }
    state.timer = setInterval(() => {
      produce(ctx, state).catch((error: unknown) => {
        ctx.log.error('devnet block production failed', errorFields(error));
        setImmediate(() => { throw error; });
      });
    }, devnet.config.blockTimeMs);
    ctx.ready();
    return state;
  },
  handle(message, state) {
    if (message.type !== 'finalized') throw new Error(`devnet source does not accept '${message.type}'`);
    const finalized = state.devnet.finalized();
    return { number: finalized.number, hash: finalized.hash };
  },
  async stop(state) {
    if (state.timer) clearInterval(state.timer);
    state.peer?.close();
    while (state.producing) await new Promise((resolve) => setTimeout(resolve, 10));
    await state.store.close();
  },
});

