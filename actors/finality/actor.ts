/**
 * Lane `finality`: follows the finalized block of the configured finality backend and tells the
 * chain lane. Backends `devnet` (the devnet's own finality), `rpc` (the upstream's `finalized`
 * tag) and `none` (the finalized block the store records, from an import) are answered by the
 * live source actor, which owns the connection or the store; this lane polls it. Backend
 * `beacon_api` is this lane's own: Beacon API endpoints, by agreement or by light-client proof
 * (actors/finality/beacon-api.ts). A disagreement between endpoints is fail-closed: nothing is
 * sent, and the lane reports degraded saying which endpoints disagree on what.
 *
 * With `finality.event_stream`, the lane also subscribes to each endpoint's Beacon API event stream
 * (`finalized_checkpoint` by agreement: a round at once; `light_client_finality_update` by proof:
 * the event's own update is verified, a round only when the store cannot verify it as it stands);
 * the interval poll stays the fallback (an endpoint without the stream, or a reconnect).
 *
 * Accepts: nothing (FinalityInbox, messages.ts). Asks `source`: `finalized` → {number, hash} | null
 * (actors/sources/messages.ts). Sends: FinalizedNotice to `chain` (actors/chain/messages.ts).
 */
import { defineActor, unknownTag, type ActorContext } from '../../runtime/actor.js';
import { errorFields, redactUrl } from '../../runtime/log.js';
import type { ChainInbox, FinalizedNotice } from '../chain/messages.js';
import type { SourceInbox, SourceReplies } from '../sources/messages.js';
import type { FinalityInbox } from './messages.js';
import type { Hex } from '../../net/eth/hex.js';
import { createBeaconFinality, type BeaconApiFinalityArgs, type BeaconFinality, } from './beacon-api.js';
import { openStore, type Store } from '../../store/store.js';
import { storePersistence } from './persistence.js';
import { subscribeBeaconEvents, type BeaconEventStream } from '../../net/beacon/event-stream.js';
import type { ConsensusP2pArgs } from './consensus-p2p.js';

export interface FinalityArgs {
  readonly kind: 'devnet' | 'rpc' | 'none' | 'beacon_api' | 'consensus_p2p';
  readonly pollIntervalMs: number;
  /** kind = beacon_api, and consensus_p2p's light client (no URLs: its transport is the peers). */
  readonly beacon?: BeaconApiFinalityArgs;
  /** kind = consensus_p2p: the consensus-layer network settings. */
  readonly p2p?: ConsensusP2pArgs;
  /** Where the light-client store is kept across restarts (beacon_api with a checkpoint root). */
  readonly dataDir?: string;
}

interface State {
  timer: NodeJS.Timeout | null;
  last: { number: number; hash: Hex } | null;
  polling: boolean;
  stopping: boolean;
  /** An event arrived during a round: run another one right after it (with the newest such event). */
  again: boolean;
  pending: { topic: string; data: string } | null;
  streams: BeaconEventStream[];
  healthy: boolean | null;
  /** The last degraded reason reported (a changed reason is reported again). */
  reason: string | null;
  beacon: BeaconFinality | null;
  store: Store | null;
  /** consensus_p2p: stops the libp2p host and discovery. */
  stopPeers: (() => Promise<void>) | null;
}

function degrade(ctx: ActorContext<FinalityArgs>, state: State, reason: string): void {
  if (state.healthy !== false || state.reason !== reason) {
    ctx.log.warn('finality not usable', { reason });
    ctx.degraded(reason);
  }
  state.healthy = false;
  state.reason = reason;
}

async function announce(ctx: ActorContext<FinalityArgs>, state: State, finalized: { number: number; hash: Hex }): Promise<void> {
  if (state.healthy !== true) ctx.ready();
  state.healthy = true;
  state.reason = null;
  if (state.last?.number === finalized.number && state.last.hash === finalized.hash) return;
  state.last = finalized;
  const notice: FinalizedNotice = { type: 'finalized', number: finalized.number, hash: finalized.hash };
  await ctx.send<ChainInbox>('chain', notice);
}

async function pollSource(ctx: ActorContext<FinalityArgs>, state: State): Promise<void> {
  const finalized = await ctx.ask<SourceInbox, SourceReplies['finalized']>('source', { type: 'finalized' }, Math.max(5000, ctx.args.pollIntervalMs));
  if (finalized === null) degrade(ctx, state, `the ${ctx.args.kind} finality backend reports no finalized block`);
  else await announce(ctx, state, finalized);
}

async function pollBeacon(ctx: ActorContext<FinalityArgs>, state: State, beacon: BeaconFinality, event?: { topic: string; data: string }): Promise<void> {
  let offered = null;
  if (event) {
    try {
      offered = await beacon.offer(event.topic, event.data);
    } catch (error) {
      // A pushed object that fails verification is not believed: a full round asks the endpoints again.
      ctx.log.warn('a beacon event failed verification', { topic: event.topic, reason: (error as Error).message });
    }
  }
  const round = offered ?? await beacon.round();
  if (round.kind === 'disagreement') return degrade(ctx, state, round.reason);
  if (round.kind === 'unavailable') return degrade(ctx, state, `${ctx.args.kind} finality unavailable: ${round.reason}`);
  if (round.problems.length > 0) ctx.log.warn('some beacon endpoints failed', { problems: round.problems.join('; ') });
  if (state.last?.number !== round.number || state.last.hash !== round.hash) ctx.log.info('finalized', { number: round.number, hash: round.hash, detail: round.detail });
  await announce(ctx, state, { number: round.number, hash: round.hash });
}

async function poll(ctx: ActorContext<FinalityArgs>, state: State, event?: { topic: string; data: string }): Promise<void> {
  if (state.polling) return;
  state.polling = true;
  try {
    if (state.beacon) await pollBeacon(ctx, state, state.beacon, event);
    // consensus_p2p before its light client exists (a peer connected while the network starts): nothing to ask yet.
    else if (ctx.args.kind !== 'consensus_p2p') await pollSource(ctx, state);
  } catch (error) {
    if (state.healthy !== false) ctx.log.warn('finality backend unavailable', errorFields(error));
    degrade(ctx, state, `finality backend unavailable: ${(error as Error).message}`);
  } finally {
    state.polling = false;
    if (state.again && !state.stopping) {
      const event = state.pending ?? undefined;
      state.again = false;
      state.pending = null;
      setImmediate(() => void poll(ctx, state, event));
    }
  }
}

/** An event from a beacon endpoint: finality may have moved, read it now. */
function wake(ctx: ActorContext<FinalityArgs>, state: State, event: { topic: string; data: string }): void {
  if (state.stopping) return;
  if (state.polling) {
    state.again = true;
    state.pending = event;
  } else void poll(ctx, state, event);
}

/**
 * By agreement a `finalized_checkpoint` event says when to read the endpoints again; by proof the
 * `light_client_finality_update` event carries the signed update itself (a checkpoint event proves nothing).
 */
const eventTopics = (beacon: NonNullable<FinalityArgs['beacon']>) => (beacon.lightClient ? ['light_client_finality_update'] : ['finalized_checkpoint']);

function subscribe(ctx: ActorContext<FinalityArgs>, state: State): BeaconEventStream[] {
  const beacon = ctx.args.beacon;
  if (ctx.args.kind !== 'beacon_api' || !beacon?.eventStream) return [];
  const EVENT_TOPICS = eventTopics(beacon);
  return beacon.urls.map((url) => {
    const endpoint = redactUrl(url);
    return subscribeBeaconEvents({
      url, topics: EVENT_TOPICS, backoffInitialMs: beacon.backoffInitialMs, backoffMaxMs: beacon.backoffMaxMs,
      onEvent: (topic, data) => wake(ctx, state, { topic, data }),
      onState: (change) => {
        if (change.connected) ctx.log.info('beacon event stream connected', { endpoint, topics: EVENT_TOPICS.join(',') });
        else ctx.log.warn('beacon event stream not connected; polling meanwhile', { endpoint, reason: change.reason, pollIntervalMs: ctx.args.pollIntervalMs });
      },
    });
  });
}

/** consensus_p2p: the light client over libp2p peers; a gossiped finality update wakes the lane like a Beacon API event. */
async function consensusBackend(ctx: ActorContext<FinalityArgs>, state: State, store: Store | null): Promise<BeaconFinality> {
  const { beacon, p2p } = ctx.args;
  if (!beacon || !p2p) throw new Error('finality kind consensus_p2p started without its checkpoint and network settings');
  // Loaded only for this backend: libp2p is a large import the other backends do not need.
  const { startConsensusFinality } = await import('./consensus-p2p.js');
  const backend = await startConsensusFinality(beacon, p2p, store ? storePersistence(store, ctx.log) : undefined, {
    log: ctx.log,
    onGossip: (topic, data) => wake(ctx, state, { topic, data }),
    onFirstPeer: () => {
      if (state.stopping) return;
      if (state.polling) state.again = true;
      else void poll(ctx, state);
    },
  });
  state.stopPeers = () => backend.peers.stop();
  return backend;
}

export default defineActor<State, FinalityArgs, FinalityInbox>({
  async init(ctx) {
    const lightClientMode = (ctx.args.kind === 'beacon_api' || ctx.args.kind === 'consensus_p2p') && ctx.args.beacon?.lightClient;
    const store = lightClientMode && ctx.args.dataDir ? openStore({ dataDir: ctx.args.dataDir }) : null;
    const beacon = ctx.args.kind === 'beacon_api' && ctx.args.beacon ? createBeaconFinality(ctx.args.beacon, store ? storePersistence(store, ctx.log) : undefined) : null;
    if (ctx.args.kind === 'beacon_api' && !beacon) throw new Error('finality kind beacon_api started without its endpoint settings');
    const state: State = { timer: null, last: null, polling: false, stopping: false, again: false, pending: null, streams: [], healthy: null, reason: null, beacon, store, stopPeers: null };
    if (ctx.args.kind === 'consensus_p2p') state.beacon = await consensusBackend(ctx, state, store);
    state.timer = setInterval(() => void poll(ctx, state), ctx.args.pollIntervalMs);
    state.streams = subscribe(ctx, state);
    void poll(ctx, state);
    return state;
  },
  handle(message) {
    throw new Error(`finality does not accept '${unknownTag(message)}'`);
  },
  async stop(state) {
    state.stopping = true;
    if (state.timer) clearInterval(state.timer);
    for (const stream of state.streams) stream.close();
    state.beacon?.close();
    // consensus_p2p: closing the network first ends a Req/Resp request in flight instead of waiting out its timeout.
    await state.stopPeers?.();
    while (state.polling) await new Promise((resolve) => setTimeout(resolve, 10));
    await state.store?.close();
  },
});
