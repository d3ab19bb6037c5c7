/**
 * `GET /v1/network/status` (spec §2.10): the machine-readable network snapshot, and `GET /debug/network`, the page
 * that renders it (api/debug-network-page.ts). Both are open operational routes (spec §5.4). The snapshot joins
 * readiness, the stored chain range (from the configured start to the observed head, every gap counted), the
 * processors, and — for `kind = "p2p"` — the peer lane's supervisor, managers, request outcomes, sessions and
 * origins. For the `devnet`, `rpc` and `none` sources it reports what applies and names what does not, and with
 * `[delivery.jetstream]` on, the JetStream publication per processor. No peer identity or server address appears in it.
 */
import type { Store } from '../store/store.js';
import { u64Key } from '../store/keys.js';
import { pendingInverses } from '../store/undo-records.js';
import type { P2pSnapshot } from '../net/p2p/network-snapshot.js';
import type { ReadinessReport } from './operational.js';
import type { Route } from './routes.js';
import { DEBUG_NETWORK_PAGE } from './debug-network-page.js';
import { canonicalBase, canonicalHeadNumber } from '../store/chain-heads.js';
import { publicationStatus } from './aggregate/publication-status.js';

export type LiveSourceKind = 'devnet' | 'rpc' | 'none' | 'p2p';

export interface NetworkStatusDeps {
  readonly store: Store;
  readonly source: LiveSourceKind;
  readonly processors: readonly { readonly id: string; readonly instance: string; readonly startBlock: number | null }[];
  readonly readiness: () => Promise<ReadinessReport>;
  /** The peer lane's part (kind = "p2p"); rejects when the lane does not answer. */
  readonly p2p: () => Promise<P2pSnapshot>;
}

export interface NetworkStatus {
  readonly readiness: { readonly ready: boolean; readonly liveReady: boolean; readonly lanes: readonly { readonly lane: string; readonly state: string }[] };
  readonly storedRangeContiguous: boolean;
  readonly storedRange: { readonly from: number; readonly to: number } | null;
  readonly syncTargetBlock: number | null;
  readonly blocksRemaining: number;
  readonly network: {
    readonly source: LiveSourceKind;
    /** What this source reports and what does not apply to it. */
    readonly applies: { readonly peers: boolean; readonly note: string | null };
    readonly supervisor: P2pSnapshot['supervisor'] | null;
    readonly managers: P2pSnapshot['managers'];
    readonly materialRequests: { readonly byOutcome: P2pSnapshot['requests']; readonly waitingForPeerSlotsMs: number } | null;
    readonly sessions: P2pSnapshot['sessions'] | null;
    readonly byOrigin: P2pSnapshot['byOrigin'] | null;
    readonly bans: P2pSnapshot['bans'] | null;
    readonly bytesReceived: number | null;
    readonly droppedMessages: P2pSnapshot['messages'] | null;
    /** `sources.live.nat` (p2p only): mode, mapping state, external address and mapped ports. */
    readonly nat: P2pSnapshot['nat'] | null;
    readonly error: string | null;
  };
  readonly processors: readonly { readonly id: string; readonly pendingDeltas: number }[];
  /** JetStream publication as the publisher lane last reported it, a row per published change log; null when off (no server address: the route is open). */
  readonly publication: {
    readonly stream: string;
    readonly servers: number;
    readonly reportedAt: string;
    readonly processors: readonly { readonly id: string; readonly instance: string; readonly publishedSequence: string; readonly lagChanges: number; readonly lagSeconds: number; readonly resets: number; readonly state: string }[];
  } | null;
  readonly generatedAt: string;
}

function publicationCard(): NetworkStatus['publication'] {
  const status = publicationStatus();
  if (!status) return null;
  return {
    stream: status.stream, servers: status.servers.length, reportedAt: status.reportedAt,
    processors: Object.entries(status.processors).flatMap(([id, p]) => [
      { id, instance: p.instance, publishedSequence: p.publishedSequence, lagChanges: p.lagChanges, lagSeconds: p.lagSeconds, resets: p.resets.epoch_changed + p.resets.retention_gap, state: p.state },
      ...(p.others ?? []).map((o) => ({ id, instance: o.instance, publishedSequence: o.publishedSequence, lagChanges: o.lagChanges, lagSeconds: o.lagSeconds, resets: 0, state: o.state })),
    ]),
  };
}

const NOT_PEERS: Readonly<Record<Exclude<LiveSourceKind, 'p2p'>, string>> = {
  devnet: 'the embedded devnet produces the chain itself: no peers, sessions or material requests; the sync target is the devnet head',
  rpc: 'an upstream JSON-RPC node is the source: no peers or sessions; the sync target is the newest block recorded from it',
  none: 'no live source: the node serves its stored chain; nothing is synced',
};

/** First and last canonical block, and how many canonical blocks lie between `from` and `to`. */
function canonicalStats(store: Store, from: number, to: number): { present: number; first: number | null; last: number | null } {
  const first = canonicalBase(store)?.number ?? null;
  const last = canonicalHeadNumber(store);
  const present = to < from ? 0 : store.chain.canonical.getKeysCount({ start: u64Key(from), end: u64Key(to + 1) });
  return { present, first, last };
}

/**
 * The durable pending rows of an instance: the inverse writes an ordered-state kind keeps for each
 * block not yet finalized (actors/kinds/sdk/state.ts), removed when finality reconciles the
 * block. Live and archive paths write one table, so there is nothing else to reconcile; a block-local
 * kind (blobs) keeps none — its undo is derived from the stored rows. Counted from the undo table's
 * keys (one a block not yet finalized, each carrying its count); an instance with no tables yet has none.
 */
function pendingDeltas(store: Store, instance: string): number {
  if (!store.processorInstances().includes(instance)) return 0;
  return pendingInverses(store.processor(instance).undo);
}

export async function buildNetworkStatus(deps: NetworkStatusDeps): Promise<NetworkStatus> {
  const report = await deps.readiness().catch((): ReadinessReport => ({ ready: false, lanes: [] }));
  const source = report.lanes.find((lane) => lane.lane === 'source');
  let p2p: P2pSnapshot | null = null;
  let error: string | null = null;
  if (deps.source === 'p2p') {
    try {
      p2p = await deps.p2p();
    } catch (failure) {
      error = `the peer lane did not answer: ${(failure as Error).message}`.slice(0, 200);
    }
  }
  const starts = deps.processors.map((p) => p.startBlock).filter((n): n is number => n !== null);
  const probe = canonicalStats(deps.store, 0, -1);
  const start = starts.length > 0 ? Math.min(...starts) : probe.first ?? 0;
  const observed = p2p ? p2p.observedHead : null;
  const target = Math.max(observed ?? -1, probe.last ?? -1);
  const syncTargetBlock = target >= 0 ? target : null;
  const stats = syncTargetBlock === null ? { present: 0 } : canonicalStats(deps.store, start, syncTargetBlock);
  const expected = syncTargetBlock === null ? 0 : Math.max(0, syncTargetBlock - start + 1);
  const storedTo = probe.last;
  const storedExpected = storedTo === null ? 0 : Math.max(0, storedTo - start + 1);
  const storedPresent = storedTo === null ? 0 : canonicalStats(deps.store, start, storedTo).present;
  return {
    readiness: { ready: report.ready, liveReady: source?.state === 'ready', lanes: report.lanes.map((lane) => ({ lane: lane.lane, state: lane.state })) },
    storedRangeContiguous: storedPresent === storedExpected,
    storedRange: probe.first === null || probe.last === null ? null : { from: probe.first, to: probe.last },
    syncTargetBlock,
    blocksRemaining: Math.max(0, expected - stats.present),
    network: {
      source: deps.source,
      applies: { peers: deps.source === 'p2p', note: deps.source === 'p2p' ? null : NOT_PEERS[deps.source] },
      supervisor: p2p?.supervisor ?? null,
      managers: p2p?.managers ?? [],
      materialRequests: p2p ? { byOutcome: p2p.requests, waitingForPeerSlotsMs: p2p.waitingForPeerSlotsMs } : null,
      sessions: p2p?.sessions ?? null,
      byOrigin: p2p?.byOrigin ?? null,
      bans: p2p?.bans ?? null,
      bytesReceived: p2p?.bytesReceived ?? null,
      droppedMessages: p2p?.messages ?? null,
      nat: p2p?.nat ?? null,
      error,
    },
    processors: deps.processors.map((p) => ({ id: p.id, pendingDeltas: pendingDeltas(deps.store, p.instance) })),
    publication: publicationCard(),
    generatedAt: new Date().toISOString(),
  };
}

export function networkStatusRoutes(deps: NetworkStatusDeps): Route[] {
  return [
    { method: 'get', pattern: '/v1/network/status', open: true, handler: async () => ({ body: await buildNetworkStatus(deps), headers: { 'cache-control': 'no-store' } }) },
    { method: 'get', pattern: '/debug/network', open: true, handler: () => ({ body: DEBUG_NETWORK_PAGE, contentType: 'text/html; charset=utf-8', headers: { 'cache-control': 'no-store' } }) },
  ];
}
