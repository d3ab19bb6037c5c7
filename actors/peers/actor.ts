/**
 * Lane `source`, kind `p2p`: the peer manager. Holds RLPx sessions (eth/69, eth/68) with the trusted peers under a
 * network supervisor (actors/peers/network.ts), qualifies each session against the verified execution anchor, and
 * follows the peers' chain: each step asks for the headers after the local head, walks parent hashes down to the
 * verified chain on a reorganisation, fetches bodies and receipts in windows spread over the peers, verifies every
 * block whole on the CPU pool, records the branch, and tells `chain` the new head. The node key is the stored
 * `execution-p2p-secret`.
 *
 * Accepts P2pSourceInbox (actors/sources/messages.ts): ask `finalized` → `{ number, hash } | null` (finality kind `devnet`: the devnet's rule, the canonical
 *          block `finalityLag` below the verified head; kind `none`: the last `finalize` move of the journal);
 *          ask `network-status` → P2pSnapshot (no peer identities);
 *          ask `history.blocks` / `history.headers` / `history.range` → the `p2p` history source's blocks, headers and
 *          the peers' announced ranges (net/p2p/history-range.ts, by hash down from `topHash` when asked: history-by-hash.ts;
 *          its own request budget, never the live head's last slot).
 * Sends to `chain`: `head { number, hash }` (HeadNotice, actors/chain/messages.ts) once the head's branch is verified and recorded.
 * Asks `chain`: `status` (with `sources.live.start = "finalized"` on a fresh store: the finality backend's first finalized block,
 *          which the chain then begins at, fetched by its hash and verified).
 * Health: ready once caught up with at least `minimumPeers` qualified sessions; degraded at once while it has fewer
 *         (the supervisor keeps retrying), or while the peers' chain cannot be followed (a reorganisation deeper than
 *         `maxReorgDepth`). Bugs and store failures crash the actor for its supervisor.
 *
 * NAT: with `sources.live.nat` upnp, pmp or any the network manager maps the lane's ports at the gateway, renews
 * them, announces the external address in discovery and removes them on a clean stop (net/p2p/nat/).
 *
 * Start: with an empty store it fetches and verifies the genesis block from the first qualified peer and follows
 * from there; otherwise it resumes from the highest canonical block.
 */
import { defineActor, unknownTag, type ActorContext } from '../../runtime/actor.js';
import { CodedError } from '../../runtime/errors.js';
import { errorFields } from '../../runtime/log.js';
import { getBlockNumber, getCanonicalHash, getHeaderBytes, recordBlocks, type BlockMaterial } from '../../store/chain-material.js';
import { openStore, type Store } from '../../store/store.js';
import { ensureP2pSecret } from '../../store/secret.js';
import { decodeHeader } from '../../net/eth/header.js';
import { bytesToHex, hexToBytes } from '../../net/eth/hex.js';
import { receiptsWanted, type LogInterest } from '../../net/p2p/log-interest.js';
import { acquireStep, fetchHeaderByHash, InvalidBlockError, NoPeersError, ReorgTooDeepError, type AcquiredBlock, type HeadersAhead } from '../../net/p2p/acquire.js';
import type { BlockRef } from '../../store/chain-types.js';
import type { ChainIdentity, LocalHead } from '../../net/p2p/status.js';
import type { ChainInbox, ChainReplies } from '../chain/messages.js';
import type { HistoryBlocksAsk, HistoryHeadersAsk, HistoryRangeAsk, P2pSourceInbox, SourceReplies } from '../sources/messages.js';
import { answerHistoryAsk } from './history-answers.js';
import type { BlockMaterialOutcome } from '../node/tasks.js';
import { batchOutcomes, materialInput } from './verify-batch.js';
import { createP2pMetrics, type P2pMetrics } from './metrics.js';
import { NetworkManager } from './network.js';
import { storeChainReader } from './store-chain-reader.js';
import { chainRequestHandler } from '../../net/p2p/serve.js';
import { dnsTxtResolver } from '../../net/discovery/dns-resolver.js';
import { PeerStore } from '../../net/discovery/peer-store.js';
import { join } from 'node:path';
import type { NatMode } from '../../net/p2p/nat/mode.js';
import { canonicalHead, journalFinalized } from '../../store/chain-heads.js';

export interface PeersSourceArgs {
  readonly dataDir: string;
  readonly chain: ChainIdentity;
  readonly trustedPeers: readonly string[];
  /** EIP-1459 tree URLs (`enrtree://…`) and the resolver asked for them (`host:port`; null: the system's). */
  readonly dnsTrees: readonly string[];
  readonly dnsServer: string | null;
  readonly peerStoreMaxEntries: number;
  /** discv5 (UDP port on 127.0.0.1, 0: any free one; bootnode records); null: off. */
  readonly discv5: { readonly port: number; readonly bootnodes: readonly string[]; readonly announceIp?: string | null } | null;
  /** discv4 (UDP port on 127.0.0.1; bootnode enode URLs); null: off (`discovery_port = 0`). */
  readonly discv4?: { readonly port: number; readonly bootnodes: readonly string[]; readonly announceIp?: string | null } | null;
  /** `sources.live.nat` read (net/p2p/nat/mode.ts) and `nat_lease_seconds`; absent: none. */
  readonly nat?: { readonly mode: NatMode; readonly leaseSeconds: number };
  readonly listenerPort: number;
  readonly maxPeers: number;
  readonly materialRequestConcurrency: number;
  readonly materialRequestBlocks: number;
  readonly minimumPeers: number;
  readonly peerRecoveryTimeoutSeconds: number;
  readonly peerBanSeconds: number;
  readonly requestTimeoutMs: number;
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
  readonly pollIntervalMs: number;
  readonly maxReorgDepth: number;
  readonly finality: { readonly kind: 'devnet'; readonly lag: number } | { readonly kind: 'none' };
  /** `sources.live.start`: where a fresh store's chain begins (genesis, or the finality backend's first finalized block). */
  readonly start?: 'genesis' | 'finalized';
  /**
   * The bloom check before receipts (net/p2p/log-interest.ts): receipts only of blocks whose verified header bloom
   * may hold a log this wants (the union of the configured processors' interests, actors/node/receipt-interest.ts); absent or null: every block's receipts.
   */
  readonly receiptInterest?: LogInterest | null;
}

type Ctx = ActorContext<PeersSourceArgs>;

interface State {
  readonly store: Store;
  readonly network: NetworkManager;
  readonly shutdown: AbortController;
  readonly wake: () => void;
  readonly loop: Promise<void>;
  readonly head: { current: (BlockRef & { timestamp: number }) | null };
}

/** The disposable peer store in data_dir (addresses only; deleting it costs a slower start). */
const PEER_STORE_FILE = 'p2p-peers.json';

/** How often DNS tree roots are re-resolved (spec §8: name-service root resubmission every 15 s). */
const DNS_ROOT_INTERVAL_MS = 15_000;

/** Headers asked for per step: the most one step adds to the recorded branch before it is announced. */
const MAX_HEADERS_PER_STEP = 192;

export default defineActor<State, PeersSourceArgs, P2pSourceInbox>({
  init(ctx) {
    const args = ctx.args;
    const store = openStore({ dataDir: args.dataDir });
    const metrics = createP2pMetrics(ctx.metrics);
    const head = { current: canonicalTip(store) };
    let wakeUp: (() => void) | null = null;
    let pendingWake = false;
    const wake = () => {
      if (wakeUp) wakeUp();
      else pendingWake = true;
    };
    const wait = (ms: number) => new Promise<void>((resolve) => {
      if (pendingWake) {
        pendingWake = false;
        resolve();
        return;
      }
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wakeUp = null;
        pendingWake = false;
        resolve();
      }
      wakeUp = done;
    });
    const genesis: BlockRef = { number: 0, hash: args.chain.genesis.hash };
    const network = new NetworkManager({
      privateKey: ensureP2pSecret(args.dataDir),
      chain: args.chain, trustedPeers: args.trustedPeers,
      dnsTrees: args.dnsTrees, resolveTxt: dnsTxtResolver(args.dnsServer, args.requestTimeoutMs), dnsIntervalMs: DNS_ROOT_INTERVAL_MS, maxCandidates: args.peerStoreMaxEntries,
      peerStore: new PeerStore(join(args.dataDir, PEER_STORE_FILE), args.peerStoreMaxEntries),
      discv5: args.discv5, discv4: args.discv4 ?? null, ...(args.nat ? { nat: args.nat } : {}),
      listenPort: args.listenerPort, maxPeers: args.maxPeers,
      concurrency: args.materialRequestConcurrency, windowBlocks: args.materialRequestBlocks, banMs: args.peerBanSeconds * 1000,
      recoveryMs: args.peerRecoveryTimeoutSeconds * 1000, backoffInitialMs: args.backoffInitialMs, backoffMaxMs: args.backoffMaxMs,
      requestTimeoutMs: args.requestTimeoutMs,
      localHead: (): LocalHead => {
        const h = head.current;
        return h ? { number: h.number, hash: h.hash, timestamp: h.timestamp, earliest: 0 } : { number: 0, hash: genesis.hash, timestamp: args.chain.genesis.timestamp, earliest: 0 };
      },
      anchor: () => journalFinalized(store) ?? genesis,
      handler: chainRequestHandler(storeChainReader(store)),
      log: ctx.log, metrics, onChange: wake,
    });
    network.start();
    const shutdown = new AbortController();
    ctx.log.info('following devp2p peers', { trustedPeers: args.trustedPeers.length, dnsTrees: args.dnsTrees.length, chainId: args.chain.chainId, genesis: args.chain.genesis.hash });
    const loop = runFollower(ctx, store, network, metrics, head, shutdown.signal, wait);
    return { store, network, shutdown, wake, loop, head };
  },

  handle(message, state, ctx) {
    switch (message.type) {
      case 'finalized':
        return finalized(state, ctx.args.finality);
      case 'network-status':
        return state.network.snapshot(state.head.current?.number ?? null);
      case 'history.blocks':
      case 'history.headers':
      case 'history.range':
        return answerHistory(ctx, state, message);
      default:
        throw new CodedError('invalid_request', `the p2p source does not accept '${unknownTag(message)}'; it answers ask 'finalized', 'network-status' and 'history.*'`);
    }
  },

  abort(state) {
    state.shutdown.abort(new Error('p2p source aborted'));
    void state.network.stop(false);
  },

  async stop(state, ctx) {
    state.shutdown.abort(new Error('p2p source stopping'));
    state.wake();
    // A clean stop also removes the NAT mappings at the gateway (bounded; net/p2p/nat/port-mapper.ts).
    await state.network.stop();
    await state.loop.catch((error: unknown) => ctx.log.warn('follower ended with an error while stopping', errorFields(error)));
    await state.store.close();
  },
});

/** The `p2p` history source's asks over this lane's pool, verified on the CPU pool (history-answers.ts). */
function answerHistory(ctx: Ctx, state: State, message: HistoryBlocksAsk | HistoryHeadersAsk | HistoryRangeAsk): Promise<SourceReplies['history.blocks'] | SourceReplies['history.headers'] | SourceReplies['history.range']> {
  return answerHistoryAsk(state.network.pool, {
    pool: state.network.pool, timeoutMs: ctx.args.requestTimeoutMs,
    verifyBatch: async (blocks: readonly AcquiredBlock[]) => batchOutcomes(await ctx.runTask<BlockMaterialOutcome[]>('verifyBlockMaterials', blocks.map(materialInput))),
  }, message);
}

function finalized(state: State, finality: PeersSourceArgs['finality']): SourceReplies['finalized'] {
  if (finality.kind === 'none') return journalFinalized(state.store);
  const head = state.head.current;
  if (!head) return null;
  const number = Math.max(0, head.number - finality.lag);
  const hash = getCanonicalHash(state.store, number);
  return hash ? { number, hash: bytesToHex(hash) } : null;
}

async function runFollower(
  ctx: Ctx, store: Store, network: NetworkManager, metrics: P2pMetrics, head: State['head'], signal: AbortSignal, wait: (ms: number) => Promise<void>,
): Promise<void> {
  let healthy = false;
  let lastReason = '';
  const degrade = (reason: string) => {
    healthy = false;
    if (reason !== lastReason) {
      ctx.degraded(reason);
      ctx.log.warn('p2p source not ready', { reason });
      lastReason = reason;
    }
  };
  const verify = async (block: AcquiredBlock) => {
    await ctx.runTask('verifyBlockMaterial', materialInput(block));
  };
  const verifyBatch = async (blocks: readonly AcquiredBlock[]) => batchOutcomes(await ctx.runTask<BlockMaterialOutcome[]>('verifyBlockMaterials', blocks.map(materialInput)));
  const receiptsFor = receiptsWanted(ctx.args.receiptInterest ?? null);
  // Headers after the head the last step reached, asked for while it fetched bodies and receipts.
  let ahead: HeadersAhead | null = null;
  while (!signal.aborted) {
    const connected = network.pool.size;
    if (connected < ctx.args.minimumPeers) {
      degrade(`waiting for peers: ${connected} qualified session(s) of the ${ctx.args.minimumPeers} required; supervisor ${network.supervisorState()}`);
      await wait(1000);
      continue;
    }
    let behind = false;
    try {
      if (!head.current) {
        if (ctx.args.start === 'finalized') {
          const pending = (await ctx.ask<ChainInbox, ChainReplies['status']>('chain', { type: 'status' }, 10_000)).pendingFinalized;
          if (pending === null) {
            degrade('waiting for the finality backend\'s first finalized block: the chain begins there (sources.live.start = "finalized")');
            await wait(ctx.args.pollIntervalMs);
            continue;
          }
          head.current = await bootstrapAt(ctx, store, network, verify, pending);
          ctx.log.info('the chain begins at the finality backend\'s finalized block', { number: pending.number, hash: pending.hash });
        } else {
          head.current = await bootstrapGenesis(ctx, store, network, verify);
        }
        await announce(ctx, head.current);
      }
      const local = head.current;
      const step = await acquireStep({
        pool: network.pool, local, isKnown: (hash) => getBlockNumber(store, hexToBytes(hash, 32)) !== undefined,
        verify, verifyBatch, maxReorgDepth: ctx.args.maxReorgDepth, timeoutMs: ctx.args.requestTimeoutMs, maxHeaders: MAX_HEADERS_PER_STEP, receiptsFor, ahead,
      });
      ahead = step.ahead;
      if (signal.aborted) break;
      const observed = network.observedHead();
      if (observed !== null) metrics.observedHead.set(observed);
      if (step.branch.length > 0) {
        await recordBlocks(store, step.branch.map(toMaterial));
        metrics.blocksRecorded.inc(step.branch.length);
        const tip = step.branch[step.branch.length - 1]!;
        network.noteRequest(step.branch[0]!.number, tip.number);
        head.current = { number: tip.number, hash: tip.hash, timestamp: decodeHeader(tip.header).timestamp };
        metrics.head.set(tip.number);
        if (step.reorged) ctx.log.info('peers moved to another branch', { head: tip.number, depth: step.branch.length });
        await announce(ctx, head.current);
      }
      behind = step.behind;
      network.notePhase(behind ? 'syncing' : 'following');
      if (!behind && !healthy) {
        ctx.ready();
        ctx.log.info('following the peers\' head', { number: head.current.number, hash: head.current.hash });
        healthy = true;
        lastReason = '';
      }
    } catch (error) {
      ahead = null;
      if (signal.aborted) break;
      if (error instanceof NoPeersError) {
        degrade(`no qualified peer answered: ${error.message}`);
      } else if (error instanceof InvalidBlockError) {
        network.noteFailure(error.message);
        ctx.log.warn('a peer served invalid material; it is banned and the step is retried', { block: error.blockNumber });
        continue;
      } else if (error instanceof ReorgTooDeepError) {
        network.noteFailure(error.message);
        degrade(error.message);
      } else {
        throw error;
      }
    }
    if (!behind) await wait(ctx.args.pollIntervalMs);
  }
}

/** Fetches the genesis header, body and receipts from a qualified peer, verifies them against the configured genesis and records them. */
function bootstrapGenesis(ctx: Ctx, store: Store, network: NetworkManager, verify: (block: AcquiredBlock) => Promise<void>): Promise<BlockRef & { timestamp: number }> {
  return bootstrapAt(ctx, store, network, verify, { number: 0, hash: ctx.args.chain.genesis.hash });
}

/**
 * Fetches block `at` by its hash (header, body, receipts) from a qualified peer, verifies it against that hash and
 * records it: the chain's first block (genesis, or the finality backend's finalized block).
 */
async function bootstrapAt(ctx: Ctx, store: Store, network: NetworkManager, verify: (block: AcquiredBlock) => Promise<void>, at: BlockRef): Promise<BlockRef & { timestamp: number }> {
  const { hash, number } = at;
  const recorded = getHeaderBytes(store, hexToBytes(hash, 32));
  if (recorded) return { number, hash, timestamp: decodeHeader(recorded).timestamp };
  const session = await network.pool.acquire();
  if (!session) throw new NoPeersError();
  try {
    const header = await fetchHeaderByHash(session, hash, ctx.args.requestTimeoutMs);
    const bodies = await session.getBlockBodies([hash], ctx.args.requestTimeoutMs);
    const receipts = await session.getReceipts([hash], ctx.args.requestTimeoutMs);
    if (!header || !bodies.items[0] || decodeHeader(header).number !== number) throw new NoPeersError();
    const block: AcquiredBlock = { number, hash, header, body: bodies.items[0], receipts: receipts.items[0] ?? Uint8Array.of(0xc0) };
    await verify(block);
    await recordBlocks(store, [toMaterial(block)]);
    network.pool.release(session, 'headers', 'ok', header.length);
    return { number, hash, timestamp: decodeHeader(header).timestamp };
  } catch (error) {
    if (!(error instanceof NoPeersError)) network.pool.release(session, 'headers', 'timeout');
    throw error instanceof NoPeersError ? error : new NoPeersError();
  }
}

function toMaterial(block: AcquiredBlock): BlockMaterial {
  return { number: block.number, hash: hexToBytes(block.hash, 32), header: block.header, body: block.body, receipts: block.receipts };
}

async function announce(ctx: Ctx, head: BlockRef): Promise<void> {
  await ctx.send<ChainInbox>('chain', { type: 'head', number: head.number, hash: head.hash });
}

/** The highest canonical block the chain lane has published, or null on a fresh store. */
function canonicalTip(store: Store): (BlockRef & { timestamp: number }) | null {
  const head = canonicalHead(store);
  if (head === null) return null;
  const header = getHeaderBytes(store, hexToBytes(head.hash, 32), head.number);
  return { ...head, timestamp: header ? decodeHeader(header).timestamp : 0 };
}

