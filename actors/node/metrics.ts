/**
 * Every runtime metric, declared in one place: read at scrape time from the actors' shared
 * mailbox control blocks and the supervisors, then merged with each actor's own registry.
 * Labels are actor and lane names from the configuration, so cardinality is bounded.
 */
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { ActorSystem } from '../../runtime/system.js';
import type { LaneState } from '../../runtime/supervisor.js';
import { registerStoreMetrics, type StoreMetricsSource } from './store-metrics.js';
import { httpGuardStats } from '../../api/http-guard.js';
import type { MapReleaseStats } from '../../store/map-release.js';

const LANE_STATES: readonly LaneState[] = ['starting', 'ready', 'degraded', 'restarting', 'failed', 'stopped'];

export interface RootMetrics {
  text(): Promise<string>;
}

export function createRootMetrics(system: ActorSystem, isReady: () => boolean, store?: StoreMetricsSource, mapRelease?: () => MapReleaseStats | null): RootMetrics {
  const registry = new Registry();
  if (store) registerStoreMetrics(registry, store);
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
