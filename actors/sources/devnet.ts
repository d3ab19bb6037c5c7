/**
 * Lane `source`, kind `devnet`: produces the deterministic devnet chain (net/devnet) on a timer,
 * verifies every block on the CPU pool like any other source's material, records it, and
 * announces the new head to `chain`. After each step it stores the step's blocks with the generator's
 * state (store/devnet-blocks.ts), so a restart continues from the newest of them instead of
 * regenerating the chain from genesis: restart time does not grow with the chain. A store without
 * that record (or one that does not match the stored chain) is replayed from the seed instead.
 *
 * Accepts SourceInbox (messages.ts): ask `finalized` → {number, hash} (the devnet's own finality, for the finality lane).
 * Sends: HeadNotice to `chain` (actors/chain/messages.ts).
 */
import { defineActor, type ActorContext } from '../../runtime/actor.js';
import { errorFields } from '../../runtime/log.js';
import { createDevnet, resolveDevnetConfig, resumeDepth, type Devnet, type DevnetConfig, type DevnetBlock, type DevnetConfigInput, type DevnetResume, type DevnetResumeBlock } from '../../net/devnet/index.js';
import { loadDevnetBlocks, saveDevnetBlocks } from '../../store/devnet-blocks.js';

import { openStore, type Store } from '../../store/store.js';
import { getCanonicalHash, getHeaderBytes, recordBlocks, type BlockMaterial } from '../../store/chain-material.js';
import { u64Key } from '../../store/keys.js';
import { bytesToHex, hexToBytes } from '../../net/eth/hex.js';
import type { ChainInbox, HeadNotice } from '../chain/messages.js';
import type { SourceInbox, SourceReplies } from './messages.js';
import { toMaterial } from './material.js';
import { startDevnetBeaconEndpoint } from './devnet-beacon.js';
import type { DevnetBeaconServer } from '../../net/devnet/beacon-server.js';
import { startDevnetPeer, type DevnetPeer } from '../../net/devnet/p2p-server.js';
import type { ChainIdentity } from '../../net/p2p/status.js';
import { storeChainReader } from '../peers/store-chain-reader.js';
import { canonicalHeadNumber } from '../../store/chain-heads.js';

export interface DevnetSourceArgs {
  readonly dataDir: string;
  readonly devnet: DevnetConfigInput;
  /** `host:port` of the devnet's Beacon-API-shaped finality endpoint; null: not served. */
  readonly beaconApi?: string | null;
  /** `IPv4:port` of the devnet's consensus p2p peer (libp2p TCP, discv5 UDP) serving its light-client data; null: not served. */
  readonly beaconP2p?: string | null;
  /** Serve the chain as an RLPx/eth peer on this address (`[devnet] p2p_listen`); null: off. */
  readonly p2p?: { readonly host: string; readonly port: number; readonly chain: ChainIdentity } | null;
}

interface State {
  readonly store: Store;
  readonly devnet: Devnet;
  timer: NodeJS.Timeout | null;
  producing: boolean;
  beacon: Pick<DevnetBeaconServer, 'headChanged' | 'close'> | null;
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

async function announce(ctx: ActorContext<DevnetSourceArgs>, block: DevnetBlock): Promise<void> {
  const notice: HeadNotice = { type: 'head', number: block.block.header.number, hash: block.hash };
  await ctx.send<ChainInbox>('chain', notice);
}

/** Stores what a restart needs to continue from `blocks` (after they are recorded, so the record never runs ahead of the chain). */
function remember(store: Store, devnet: Devnet, blocks: readonly DevnetBlock[]): Promise<void> {
  const records = blocks.map((block) => ({ number: block.block.header.number, value: devnet.resumeRecord(block.block.header.number)! }));
  return saveDevnetBlocks(store, records, devnet.head().number - resumeDepth(devnet.config) + 1);
}

/**
 * The stored generator record, when it continues the stored chain: its blocks link parent to child,
 * its newest block is recorded in the chain tables (records are written after their blocks), and
 * where it overlaps the stored canonical chain the two meet (the same block at the stored head, or
 * below it when the record's last step was a reorg the chain lane had not taken yet). The chain lane may
 * trail the source by many blocks at a stop (a fast devnet on a busy machine), the record may trail
 * the chain after a crash; either way the generator continues deterministically. Otherwise empty
 * (replay from the seed).
 */
function storedResume(store: Store, storedHeadNumber: number, config: DevnetConfig, log: ActorContext<DevnetSourceArgs>['log']): DevnetResume {
  const records = loadDevnetBlocks<DevnetResumeBlock>(store, resumeDepth(config));
  // A chain shorter than a resume needs is replayed: that is as quick.
  if (records.length < resumeDepth(config)) return [];
  const hashAt = (i: number) => records[i]!.value.built.devnetBlock.hash;
  const newest = records.length - 1;
  const linked = records.every((record, i) => i === 0 || record.value.built.devnetBlock.block.header.parentHash === hashAt(i - 1));
  const recorded = getHeaderBytes(store, hexToBytes(hashAt(newest), 32)) !== undefined;
  const common = Math.min(storedHeadNumber, records[newest]!.number) - records[0]!.number;
  // Where they overlap, the record's branch meets the stored canonical chain: at the stored head, or lower when the
  // generator's last step was a reorg the chain lane had not committed at the stop (it reorgs when told the head).
  const onCanonical = (i: number) => {
    const canonical = store.chain.canonical.get(u64Key(records[i]!.number));
    return canonical !== undefined && bytesToHex(canonical) === hashAt(i);
  };
  let agrees = common < 0;
  for (let i = common; i >= 0 && !agrees; i -= 1) agrees = onCanonical(i);
  if (!linked || !recorded || !agrees) {
    log.warn('the stored devnet record does not continue the stored chain; replaying from the seed', { records: records.length, newest: records[newest]!.number, storedHead: storedHeadNumber });
    return [];
  }
  return records.map((record) => record.value);
}

async function produce(ctx: ActorContext<DevnetSourceArgs>, state: State): Promise<void> {
  if (state.producing) return;
  state.producing = true;
  try {
    const step = await state.devnet.next();
    // The Beacon API endpoint serves the new head from now on: its event stream says so at once.
    state.beacon?.headChanged();
    const blocks = step.kind === 'block' ? [step] : step.blocks;
    await verifyAndRecord(ctx, state.store, blocks);
    await remember(state.store, state.devnet, blocks);
    if (step.kind === 'reorg') ctx.log.info('devnet reorg', { depth: step.depth, forkPoint: step.forkPoint.number });
    await announce(ctx, blocks[blocks.length - 1]!);
    const tip = blocks[blocks.length - 1]!;
    state.peer?.announce({ number: tip.block.header.number, hash: tip.hash });
  } finally {
    state.producing = false;
  }
}

export default defineActor<State, DevnetSourceArgs, SourceInbox>({
  async init(ctx) {
    const store = openStore({ dataDir: ctx.args.dataDir });
    const resumeAt = canonicalHeadNumber(store);
    const resume = resumeAt !== null && resumeAt > 0 ? storedResume(store, resumeAt, resolveDevnetConfig(ctx.args.devnet), ctx.log) : [];
    const devnet = createDevnet(ctx.args.devnet, resume);
    if (resume.length > 0) ctx.log.info('continuing the devnet from its stored blocks', { from: devnet.head().number, head: resumeAt });
    if (resumeAt !== null && resumeAt > devnet.head().number) {
      // A crash between recording a step and storing its record, or a store from before the record existed.
      if (resume.length === 0) ctx.log.info('replaying the devnet to the stored head', { head: resumeAt });
      await devnet.advanceTo(resumeAt);
      const retained = Math.min(resumeDepth(devnet.config), devnet.head().number);
      await remember(store, devnet, Array.from({ length: retained }, (_, i) => devnet.blockByNumber(devnet.head().number - retained + 1 + i)!));
    }
    await verifyAndRecord(ctx, store, [devnet.genesis]);
    const head = devnet.blockByNumber(devnet.head().number) ?? devnet.genesis;
    if (resumeAt === null) await announce(ctx, devnet.genesis);
    else if (head.hash !== devnet.genesis.hash) await announce(ctx, head);
    const beacon = ctx.args.beaconApi || ctx.args.beaconP2p ? await startDevnetBeaconEndpoint(ctx, store, devnet, ctx.args.beaconApi ?? null, ctx.args.beaconP2p ?? null) : null;
    
    const state: State = { store, devnet, timer: null, producing: false, peer: null, beacon };
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
      ctx.log.info('serving the devnet over RLPx (eth/69, eth/68)', { enode: state.peer.enode, discv4Port: state.peer.discv4Port });
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
    return { number: finalized.number, hash: finalized.hash } satisfies SourceReplies['finalized'];
  },
  async stop(state) {
    if (state.timer) clearInterval(state.timer);
    await state.beacon?.close();
    state.peer?.close();
    while (state.producing) await new Promise((resolve) => setTimeout(resolve, 10));
    await state.store.close();
  },
});

