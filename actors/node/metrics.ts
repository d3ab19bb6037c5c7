/**
 * The root's metrics, declared in one place: every runtime metric, read at scrape time from the
 * actors' shared mailbox control blocks and the supervisors, and the store gauges, read from the
 * store (store-readings.ts); then merged with each actor's own registry (its lane's metrics.ts).
 * Labels are actor, lane and processor instance names from the configuration, so cardinality is bounded.
 */
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { ActorSystem } from '../../runtime/system.js';
import type { LaneState } from '../../runtime/supervisor.js';
import { storeReadings, type PerProcessor, type StoreMetricsSource, type StoreReadings } from './store-readings.js';
import { httpGuardStats } from '../../api/http-guard.js';
import type { MapReleaseStats } from '../../store/map-release.js';

const LANE_STATES: readonly LaneState[] = ['starting', 'ready', 'degraded', 'restarting', 'failed', 'stopped'];

export interface RootMetrics {
  text(): Promise<string>;
}

export function createRootMetrics(system: ActorSystem, isReady: () => boolean, store?: StoreMetricsSource, mapRelease?: () => MapReleaseStats | null): RootMetrics {
  const registry = new Registry();
  if (store) declareStoreGauges(registry, storeReadings(store), store);
  collectDefaultMetrics({ register: registry });
  // prom-client's `nodejs_active_{handles,requests,resources}_total` are gauges named like counters
  // (`promtool check metrics` flags them); the same counts stay as `nodejs_active_*{type}` by type.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) registry.removeSingleMetric(name);
  new Counter({
    name: 'chain_node_http_refused_requests_total', help: 'Requests the HTTP guard answered itself because the web server cannot parse them (400/405/431/505), by listener and reason', labelNames: ['listener', 'reason'], registers: [registry],
    collect() { this.reset(); for (const row of httpGuardStats()) this.inc({ listener: row.listener, reason: row.reason }, row.count); },
  });
  if (mapRelease) {
    // store/map-release.ts: the store's memory-map residency the node gives back (absent while it is not active).
    new Counter({
      name: 'chain_node_store_map_releases_total', help: 'Times the node gave back its residency of the store\'s memory map (madvise MADV_DONTNEED; the pages stay in the page cache)', registers: [registry],
      collect() { const s = mapRelease(); this.reset(); if (s) this.inc(s.releases); },
    });
    new Counter({
      name: 'chain_node_store_map_released_bytes_total', help: 'File-backed resident bytes of the process given back by those releases (RssFile before minus after)', registers: [registry],
      collect() { const s = mapRelease(); this.reset(); if (s) this.inc(s.releasedBytes); },
    });
    new Counter({
      name: 'chain_node_malloc_trimmed_bytes_total', help: 'Anonymous resident bytes glibc malloc_trim gave back at those releases (RssAnon before minus after)', registers: [registry],
      collect() { const s = mapRelease(); this.reset(); if (s) this.inc(s.trimmedBytes); },
    });
  }
  const perActor = ['actor', 'lane'] as const;
  new Gauge({
    name: 'chain_node_actor_mailbox_depth', help: 'Messages in the actor mailbox (reserved and not yet handled)', labelNames: perActor, registers: [registry],
    collect() { this.reset(); for (const a of system.actorStats()) this.set({ actor: a.name, lane: a.lane }, a.mailboxDepth); },
  });
  new Gauge({
    name: 'chain_node_actor_mailbox_capacity', help: 'Configured mailbox capacity', labelNames: perActor, registers: [registry],
    collect() { this.reset(); for (const a of system.actorStats()) this.set({ actor: a.name, lane: a.lane }, a.mailboxCapacity); },
  });
  new Counter({
    name: 'chain_node_actor_messages_handled_total', help: 'Messages handled by the current incarnation of the actor', labelNames: perActor, registers: [registry],
    collect() { this.reset(); for (const a of system.actorStats()) this.inc({ actor: a.name, lane: a.lane }, Number(a.handled)); },
  });
  new Gauge({
    name: 'chain_node_actor_heap_used_bytes', help: 'V8 heap used by the actor worker', labelNames: perActor, registers: [registry],
    collect() { this.reset(); for (const a of system.actorStats()) this.set({ actor: a.name, lane: a.lane }, a.heapUsedBytes); },
  });
  new Gauge({
    name: 'chain_node_actor_heap_total_bytes', help: 'V8 heap committed by the actor worker (total_heap_size)', labelNames: perActor, registers: [registry],
    collect() { this.reset(); for (const a of system.actorStats()) this.set({ actor: a.name, lane: a.lane }, a.heapTotalBytes); },
  });
  new Gauge({
    name: 'chain_node_actor_external_memory_bytes', help: 'V8 external memory of the actor worker (ArrayBuffer backing stores and other native memory V8 was told of)', labelNames: perActor, registers: [registry],
    collect() { this.reset(); for (const a of system.actorStats()) this.set({ actor: a.name, lane: a.lane }, a.externalBytes); },
  });
  new Gauge({
    name: 'chain_node_actor_up', help: '1 while the actor worker runs', labelNames: perActor, registers: [registry],
    collect() { this.reset(); for (const a of system.actorStats()) this.set({ actor: a.name, lane: a.lane }, a.running ? 1 : 0); },
  });
  new Counter({
    name: 'chain_node_actor_memory_budget_kills_total', help: 'Actor workers killed for exceeding their memory budget', labelNames: perActor, registers: [registry],
    collect() { this.reset(); for (const a of system.actorStats()) this.inc({ actor: a.name, lane: a.lane }, a.oomKills); },
  });
  new Counter({
    name: 'chain_node_lane_restarts_total', help: 'Actor restarts by the lane supervisor', labelNames: ['lane'], registers: [registry],
    collect() { this.reset(); for (const l of system.laneCounters()) this.inc({ lane: l.lane }, l.restarts); },
  });
  new Counter({
    name: 'chain_node_lane_escalations_total', help: 'Times the lane exceeded its restart intensity and was marked failed', labelNames: ['lane'], registers: [registry],
    collect() { this.reset(); for (const l of system.laneCounters()) this.inc({ lane: l.lane }, l.escalations); },
  });
  new Gauge({
    name: 'chain_node_lane_state', help: '1 for the current state of each lane', labelNames: ['lane', 'state'], registers: [registry],
    collect() {
      this.reset();
      for (const l of system.laneCounters()) for (const state of LANE_STATES) this.set({ lane: l.lane, state }, l.state === state ? 1 : 0);
    },
  });
  new Gauge({
    name: 'chain_node_ready', help: '1 when every required lane is ready', registers: [registry],
    collect() { this.set(isReady() ? 1 : 0); },
  });
  return {
    async text() {
      const own = await registry.getMetricsAsJSON();
      const actors = (await system.collectActorMetrics()) as typeof own[];
      return AggregatorRegistry.aggregate([own, ...actors]).metrics();
    },
  };
}

/** Gauges of the store and its filesystem (ops/alerts.yml reads them); each reads its value at scrape time. */
function declareStoreGauges(registry: Registry, read: StoreReadings, limits: Pick<StoreMetricsSource, 'artifactMaxBytes' | 'budgets'>): void {
  const registers = [registry];
  const perProcessor = (gauge: Gauge<'processor'>, values: readonly PerProcessor[]) => {
    gauge.reset();
    for (const { processor, value } of values) gauge.set({ processor }, value);
  };
  new Gauge({ name: 'chain_node_data_dir_filesystem_size_bytes', help: 'Size of the filesystem holding data_dir', registers, collect() { this.set(read.filesystemSizeBytes()); } });
  new Gauge({ name: 'chain_node_data_dir_filesystem_free_bytes', help: 'Bytes of the filesystem holding data_dir available to the node (unprivileged free space)', registers, collect() { this.set(read.filesystemFreeBytes()); } });
  new Gauge({ name: 'chain_node_store_size_bytes', help: 'Size of the LMDB database file (data_dir/db/data.mdb)', registers, collect() { this.set(read.storeSizeBytes()); } });
  new Gauge({
    name: 'chain_node_chain_head_block', help: 'Highest canonical block in the chain journal', registers,
    collect() { const head = read.chainHead(); if (head === null) this.reset(); else this.set(head); },
  });
  new Gauge({
    name: 'chain_node_chain_finalized_block', help: 'Finalized block recorded in the chain journal', registers,
    collect() { const finalized = read.finalizedBlock(); if (finalized === null) this.reset(); else this.set(finalized); },
  });
  new Gauge({ name: 'chain_node_chain_finalized_age_seconds', help: 'Seconds since the finalized block last advanced (as seen by scrapes; counts from the first scrape)', registers, collect() { this.set(read.finalizedAgeSeconds()); } });
  new Gauge({ name: 'chain_node_expected_block_interval_seconds', help: 'Mean timestamp step of the last stored canonical blocks (the chain\'s block interval)', registers, collect() { this.set(read.expectedBlockIntervalSeconds()); } });
  // Spec §4.2: current and maximum artifact bytes, reported separately.
  new Gauge({
    name: 'chain_node_artifact_bytes', help: 'Artifact bytes a processor instance holds: retained finalized records and pending included-block candidates (state)', labelNames: ['processor', 'state'], registers,
    collect() {
      this.reset();
      for (const { processor, retained, pending } of read.artifactBytes()) {
        this.set({ processor, state: 'retained' }, retained);
        this.set({ processor, state: 'pending' }, pending);
      }
    },
  });
  if (limits.artifactMaxBytes !== undefined) {
    new Gauge({ name: 'chain_node_artifact_budget_bytes', help: '[budgets.artifacts] max_bytes: the most artifact bytes (retained plus pending) all processors may hold together', registers }).set(limits.artifactMaxBytes);
  }
  new Gauge({
    name: 'chain_node_pending_delta_bytes', help: 'Bytes of the inverse writes kept for blocks not yet finalized (undo tables), by processor instance', labelNames: ['processor'], registers,
    collect() { perProcessor(this, read.pendingDeltaBytes()); },
  });
  new Gauge({
    name: 'chain_node_outbox_bytes', help: 'Bytes of the change logs retained for delivery, by processor instance (backfill-subscription streams summed as "backfill-subscriptions")', labelNames: ['processor'], registers,
    collect() { perProcessor(this, read.outboxBytes()); },
  });
  if (limits.budgets) {
    const { pendingDeltaBytes, outboxBytes } = limits.budgets;
    new Gauge({ name: 'chain_node_pending_delta_budget_bytes', help: 'The pending-delta budget ([budgets.pending_deltas] max_bytes), across all processor instances', registers, collect() { this.set(pendingDeltaBytes); } });
    new Gauge({ name: 'chain_node_outbox_budget_bytes', help: 'The outbox budget ([budgets.outbox] max_bytes), across all change logs', registers, collect() { this.set(outboxBytes); } });
  }
  new Gauge({ name: 'chain_node_processor_head_block', help: 'Highest block a processor instance covers', labelNames: ['processor'], registers, collect() { perProcessor(this, read.processorHeads()); } });
  new Gauge({
    name: 'chain_node_processor_head_age_seconds', help: 'Seconds since a processor instance last applied a journal move (as seen by scrapes; counts from the first scrape)', labelNames: ['processor'], registers,
    collect() { perProcessor(this, read.processorHeadAges()); },
  });
}
