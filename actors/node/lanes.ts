/**
 * The lanes the node runs, built from the configuration. Adding a lane is one actor file in
 * actors/ plus its `[actors.<lane>]` section and an entry here.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildSpec, LaneSpec, RestartPolicy } from '../../runtime/supervisor.js';
import type { ActorBudget, NodeConfig } from './config-schema.js';

import type { ListenerArgs } from '../listener/actor.js';
import type { RpcArgs, RpcHistoryArgs } from '../rpc/actor.js';
import type { RpcServedLimits } from '../../api/aggregate/rpc-method-capabilities.js';
import type { DevnetSourceArgs } from '../sources/devnet.js';
import type { RpcSourceArgs } from '../sources/rpc.js';
import type { NoneSourceArgs } from '../sources/none.js';
import { finalityArgs } from '../finality/config.js';
import type { PeersSourceArgs } from '../peers/actor.js';
import { announcedIp } from '../peers/config-checks.js';
import { parseNatMode } from '../../net/p2p/nat/mode.js';
import type { ChainArgs } from '../chain/actor.js';
import type { ProcessorArgs } from '../processor/actor.js';
import type { OutboxArgs } from '../outbox/actor.js';
import type { SnapshotsArgs } from '../snapshots/actor.js';
import type { PublisherArgs } from '../publisher/actor.js';
import type { NatsSecrets } from './jetstream-secrets.js';
import type { HistoryArgs } from '../history/actor.js';
import { devnetInput, type ChainSpec } from './chain-spec.js';
import { builtinKind, kindInfo } from '../kinds/registry.js';
import { describedKindInfo, type CustomKindDescription } from '../kinds/kind-catalog.js';
import { kindOptionsOf } from './processor-config.js';
import { skippedHistorySources, usableHistorySources } from './history-sources.js';
import { receiptInterestOf } from './receipt-interest.js';
import type { ConfiguredProcessor } from '../../api/aggregate/configured-processors.js';

const actorModule = (file: string): string => fileURLToPath(new URL(`../${file}`, import.meta.url));

export function restartPolicy(budget: ActorBudget): RestartPolicy {
  return {
    strategy: 'one_for_one',
    intensity: budget.restart_intensity,
    periodMs: budget.restart_period_seconds * 1000,
    backoffInitialMs: budget.backoff_initial_ms,
    backoffMaxMs: budget.backoff_max_ms,
    jitter: budget.backoff_jitter,
  };
}

function children(lane: string, file: string, budget: ActorBudget, shutdownMs: number, args: (index: number) => unknown): ChildSpec[] {
  return Array.from({ length: budget.instances }, (_, index) => ({
    name: budget.instances === 1 ? lane : `${lane}#${index + 1}`,
    module: actorModule(file),
    args: args(index),
    restart: 'permanent' as const,
    mailboxCapacity: budget.mailbox_capacity,
    memoryMb: budget.memory_mb,
    shutdownMs,
  }));
}

/** Actor names of a lane's instances (`lane`, or `lane#1`, `lane#2`, … when it runs several). */
function actorNames(lane: string, budget: ActorBudget): string[] {
  return Array.from({ length: budget.instances }, (_, index) => (budget.instances === 1 ? lane : `${lane}#${index + 1}`));
}

export function processorLane(id: string): string {
  return `processor.${id}`;
}

/** `[devnet] p2p_listen`: serve the devnet over RLPx (host:port), or null. */
function devnetPeerArgs(config: NodeConfig, spec: ChainSpec): DevnetSourceArgs['p2p'] {
  const listen = config.devnet.p2p_listen;
  if (listen === '') return null;
  const at = listen.lastIndexOf(':');
  return { host: listen.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(listen.slice(at + 1)), chain: { chainId: spec.chainId, schedule: spec.schedule, genesis: spec.genesis } };
}

function peersArgs(config: NodeConfig, dataDir: string, spec: ChainSpec, custom: ReadonlyMap<string, CustomKindDescription>): PeersSourceArgs {
  const live = config.sources.live;
  return {
    dataDir, chain: { chainId: spec.chainId, schedule: spec.schedule, genesis: spec.genesis }, trustedPeers: live.trusted_peers, listenerPort: live.listener_port,
    dnsTrees: live.dns_trees, dnsServer: live.dns_server === '' ? null : live.dns_server, peerStoreMaxEntries: live.peer_store_max_entries,
    discv5: live.enable_discv5 ? { port: live.discv5_port, bootnodes: live.discv5_bootnodes, announceIp: announcedIp(live.nat) } : null,
    discv4: live.discovery_port !== 0 ? { port: live.discovery_port, bootnodes: live.discv4_bootnodes, announceIp: announcedIp(live.nat) } : null,
    nat: { mode: parseNatMode(live.nat) ?? { kind: 'none' }, leaseSeconds: live.nat_lease_seconds },
    maxPeers: live.max_peers, materialRequestConcurrency: live.material_request_concurrency, materialRequestBlocks: live.material_request_blocks,
    minimumPeers: live.minimum_peers, peerRecoveryTimeoutSeconds: live.peer_recovery_timeout_seconds, peerBanSeconds: live.peer_ban_seconds,
    requestTimeoutMs: live.request_timeout_ms, backoffInitialMs: live.backoff_initial_ms, backoffMaxMs: live.backoff_max_ms, pollIntervalMs: live.poll_interval_ms,
    maxReorgDepth: config.chain.max_reorg_depth,
    finality: config.finality.kind === 'devnet' ? { kind: 'devnet', lag: config.devnet.finality_lag } : { kind: 'none' },
    start: live.start,
    receiptInterest: receiptInterestOf(config, custom),
  };
}

function sourceLane(config: NodeConfig, dataDir: string, shutdownMs: number, spec: ChainSpec, custom: ReadonlyMap<string, CustomKindDescription>): LaneSpec {
  const budget = config.actors.source;
  const live = config.sources.live;
  const file = { devnet: 'sources/devnet.js', rpc: 'sources/rpc.js', none: 'sources/none.js', p2p: 'peers/actor.js' }[live.kind];
  const args = live.kind === 'devnet'
    ? ({ dataDir, devnet: devnetInput(config), beaconApi: config.devnet.beacon_api === '' ? null : config.devnet.beacon_api, beaconP2p: config.devnet.beacon_p2p === '' ? null : config.devnet.beacon_p2p, p2p: devnetPeerArgs(config, spec) } satisfies DevnetSourceArgs)
    : live.kind === 'p2p' ? peersArgs(config, dataDir, spec, custom)
    : live.kind === 'none' ? ({ dataDir } satisfies NoneSourceArgs) : {
      url: live.url, wsUrl: live.ws_url === '' ? null : live.ws_url, pollIntervalMs: live.poll_interval_ms, dataDir, maxReorgDepth: config.chain.max_reorg_depth,
      requestTimeoutMs: live.request_timeout_ms, maxRetries: live.max_retries, backoffInitialMs: live.backoff_initial_ms, backoffMaxMs: live.backoff_max_ms,
      pooledBlobRoots: live.pooled_blob_roots,
    } satisfies RpcSourceArgs;
  return { lane: 'source', required: true, policy: restartPolicy(budget), children: children('source', file, { ...budget, instances: 1 }, shutdownMs, () => args) };
}

function rpcLimits(config: NodeConfig): RpcServedLimits {
  const rpc = config.rpc;
  return {
    maxRequestBodyBytes: rpc.max_request_body_bytes, maxBatchRequests: rpc.max_batch_requests, maxLogsBlockRange: rpc.max_logs_block_range,
    maxLogsResults: rpc.max_logs_results, maxSubscriptionsPerConnection: rpc.max_subscriptions_per_connection, wsMaxBufferedBytes: rpc.ws_max_buffered_bytes,
  };
}

/**
 * The source of a processor's cold backfill (actors/processor/cold-backfill.ts): the first `[[sources.history]]`
 * entry the node uses (history-sources.ts), for a node_owned instance with a start_block and a history_mode other
 * than on_demand; else none.
 */
function coldBackfillSourceOf(config: NodeConfig, id: string): { coldBackfillSource?: string } {
  const processor = config.processors.find((p) => p.id === id);
  const source = usableHistorySources(config)[0];
  if (!processor || !source || processor.start_block === undefined || processor.history_mode === 'on_demand' || processor.history_control !== 'node_owned') return {};
  return { coldBackfillSource: source.id };
}

/** Each `[[processors]]` entry as the listeners, the rpc lane and the processor lanes see it. */
export function configuredProcessors(config: NodeConfig, custom: ReadonlyMap<string, CustomKindDescription> = new Map()): ConfiguredProcessor[] {
  return config.processors.map((p): ConfiguredProcessor => {
    const described = custom.get(p.id);
    return {
      id: p.id, instance: p.instance ?? p.id, output: p.output, delivery: p.delivery, startBlock: p.start_block ?? null, options: kindOptionsOf(p),
      artifacts: {
        retention: p.artifacts.retention, windowBlocks: p.artifacts.window_blocks, replayFrom: p.artifacts.replay_from ?? null,
        maxBytes: config.budgets.artifacts.max_bytes, maxPendingBlocks: config.budgets.artifacts.max_pending_blocks,
      },
      ...(described
        ? { kind: described.kind?.name ?? 'custom', info: describedKindInfo(described), module: described.module }
        : { kind: p.kind, info: kindInfo(builtinKind(p.kind)) }),
    };
  });
}

/** The arguments every processor lane of configured processor `p` shares (a replacement overrides id, instance and start). */
function processorArgs(config: NodeConfig, dataDir: string, spec: ChainSpec, p: ConfiguredProcessor, listeners: readonly string[]): ProcessorArgs {
  const entry = config.processors.find((c) => c.id === p.id)!;
  const artifacts = p.artifacts;
  const replayFrom = artifacts?.replayFrom ? config.processors.find((c) => c.id === artifacts.replayFrom) : undefined;
  return {
    ...(artifacts ? {
      artifacts: {
        retention: artifacts.retention, windowBlocks: artifacts.windowBlocks, maxBytes: artifacts.maxBytes, maxPendingBlocks: artifacts.maxPendingBlocks,
        peers: config.processors.filter((c) => (c.instance ?? c.id) !== p.instance && c.artifacts.retention !== 'none').map((c) => c.instance ?? c.id),
      },
    } : {}),
    ...(replayFrom ? { replayFrom: replayFrom.instance ?? replayFrom.id } : {}),
    historyMode: entry.history_mode,
    dataDir, id: p.id, kind: p.kind, instance: p.instance, chainId: spec.chainId, network: spec.network, startBlock: p.startBlock, options: p.options ?? {},
    checkpoints: { everyBlocks: entry.checkpoint_every_blocks, retained: entry.checkpoints_retained }, ...(p.module ? { module: p.module } : {}), listeners, batchMoves: 256,
    chain: { network: spec.network, schedule: spec.schedule, genesis: spec.genesis, ...(spec.scheduleSource ? { scheduleSource: spec.scheduleSource } : {}) },
  };
}

function processorLaneSpec(config: NodeConfig, lane: string, args: ProcessorArgs, shutdownMs: number): LaneSpec {
  return { lane, required: false, policy: restartPolicy(config.actors.processor), children: children(lane, 'processor/actor.js', { ...config.actors.processor, instances: 1 }, shutdownMs, () => args) };
}

/** A rebuild's replacement instance (store/rebuilds.ts): the processor it rebuilds, its own instance id, where it starts, its history source. */
export interface ReplacementInstance {
  readonly processor: string;
  readonly instance: string;
  readonly fromBlock: number;
  readonly source: string;
}

/** How often a replacement lane reads the journal head (it is not on the chain lane's notice list). */
const REPLACEMENT_JOURNAL_POLL_MS = 100;

/**
 * The processor lane of a rebuild's replacement: the configured processor's kind and options under a new immutable
 * instance, cold-backfilled from `fromBlock` through `source` beside the serving instance, then following the journal.
 * Its lane and actor id is the instance (`processor.<instance>`): the history lane asks it by that name.
 */
export function replacementLane(config: NodeConfig, dataDir: string, spec: ChainSpec, custom: ReadonlyMap<string, CustomKindDescription>, replacement: ReplacementInstance): LaneSpec {
  const base = configuredProcessors(config, custom).find((p) => p.id === replacement.processor);
  if (!base) throw new Error(`rebuild of processor '${replacement.processor}': it is no longer configured`);
  const listeners = actorNames('listener', config.actors.listener);
  const args: ProcessorArgs = {
    // With [delivery.jetstream] on, the publisher hears of its commits too: it publishes the replacement's log.
    ...processorArgs(config, dataDir, spec, base, config.delivery.jetstream.enabled && base.delivery ? [...listeners, 'publisher'] : listeners),
    id: replacement.instance, instance: replacement.instance, startBlock: replacement.fromBlock, historyMode: 'live_only',
    coldBackfillSource: replacement.source, pollJournalMs: REPLACEMENT_JOURNAL_POLL_MS,
  };
  return processorLaneSpec(config, processorLane(replacement.instance), args, config.runtime.shutdown_timeout_seconds * 1000);
}

/** `[delivery.jetstream]` on: the supervised `publisher` lane (not required: the node serves without the broker), budget `[actors.publisher]`. */
function publisherLane(config: NodeConfig, dataDir: string, spec: ChainSpec, shutdownMs: number, secrets: NatsSecrets, processors: readonly ConfiguredProcessor[]): LaneSpec {
  const js = config.delivery.jetstream;
  const budget = { ...config.actors.publisher, instances: 1 };
  const retained = config.processors.filter((p) => p.delivery).map((p) => p.retain_changes);
  const args: PublisherArgs = {
    dataDir, chainId: spec.chainId,
    processors, listeners: actorNames('listener', config.actors.listener), descriptorBucket: js.descriptor_bucket,
    publisher: {
      servers: js.servers, stream: js.stream, subjectPrefix: js.subject_prefix, replicas: js.replicas, maxBytes: js.max_bytes, ackTimeoutMs: js.ack_timeout_ms,
      // Messages per subject follow the instances' retention: a message holds at least one change, so the largest retain_changes bounds it (0 keeps all).
      maxMessagesPerSubject: retained.length === 0 || retained.includes(0) ? -1 : Math.max(...retained),
      auth: secrets,
    },
    maxMessageBytes: js.max_message_bytes, retryInitialMs: js.retry_initial_ms,
  };
  return { lane: 'publisher', required: false, policy: restartPolicy(budget), children: children('publisher', 'publisher/actor.js', budget, shutdownMs, () => args) };
}

/** `custom`: what the root learned of each custom processor's module (by processor id; see kind-catalog.ts). */
/** `seeds`: each seeded processor's `seed_savepoint` as an absolute path (by processor id). */
/** `replacements`: the replacement instances of rebuilds recorded in the store (each gets a processor lane; see replacementLane). */
export function buildLanes(
  config: NodeConfig, dataDir: string, spec: ChainSpec, apiToken: string | null = null, custom: ReadonlyMap<string, CustomKindDescription> = new Map(),
  seeds: ReadonlyMap<string, string> = new Map(), replacements: readonly ReplacementInstance[] = [], natsSecrets: NatsSecrets = {},
): LaneSpec[] {
  const shutdownMs = config.runtime.shutdown_timeout_seconds * 1000;
  const jetstream = config.delivery.jetstream;
  const listeners = actorNames('listener', config.actors.listener);
  const rpcActors = actorNames('rpc', config.actors.rpc);
  const processors = configuredProcessors(config, custom);
  // On-demand JSON-RPC history (spec §4.7): on with a history source unless `[history] on_demand = false`.
  const historySources = usableHistorySources(config);
  const onDemandSource = config.history.on_demand ? (historySources.find((source) => source.id === config.history.on_demand_source) ?? historySources[0]) : undefined;
  const rpcHistory: RpcHistoryArgs | null = onDemandSource
    ? { maxBlocks: config.history.on_demand_max_blocks, locator: onDemandSource.kind === 'rpc', timeoutMs: config.history.on_demand_timeout_seconds * 1000, maxPending: config.history.on_demand_max_pending }
    : null;
  const historyArgs: HistoryArgs = {
    dataDir, chainId: spec.chainId, chunkBlocks: config.history.chunk_blocks,
    sources: historySources.map((source) => ({
      id: source.id, kind: source.kind, concurrency: source.source_concurrency, url: source.url, batchBlocks: source.batch_blocks,
      requestTimeoutMs: source.request_timeout_ms, maxRetries: source.max_retries, backoffInitialMs: source.backoff_initial_ms, backoffMaxMs: source.backoff_max_ms,
      pooledBlobRoots: source.pooled_blob_roots, encoding: source.encoding, path: source.path, cacheDir: source.cache_dir === '' ? join(dataDir, 'era1-cache', source.id) : source.cache_dir, cacheFiles: source.cache_files,
    })),
    skippedSources: skippedHistorySources(config),
    processors: config.processors.map((p) => {
      const configured = processors.find((c) => c.id === p.id)!;
      return { id: p.id, instance: configured.instance, historyMode: p.history_mode, historyControl: p.history_control, ordering: configured.info.ordering, startBlock: p.start_block ?? null };
    }),
    onDemand: { source: onDemandSource?.id ?? null, maxBlocks: config.history.on_demand_max_blocks, timeoutMs: config.history.on_demand_timeout_seconds * 1000 },
  };
  const listenerArgs: ListenerArgs = {
    address: config.listeners.api,
    dataDir,
    maxBodyBytes: config.limits.max_request_body_bytes,
    maxUrlBytes: config.limits.max_url_bytes,
    drainMs: Math.floor(shutdownMs / 2),
    chainId: spec.chainId,
    network: spec.network,
    processors,
    defaultPageLimit: config.limits.default_page_limit,
    maxPageLimit: config.limits.max_page_limit,
    maxBlockRange: config.limits.max_block_range,
    sse: { heartbeatSeconds: config.sse.heartbeat_seconds, maxBufferedBytes: config.sse.max_buffered_bytes, batchChanges: config.sse.batch_changes },
    rpcHttp: config.listeners.rpc_http,
    rpcWs: config.listeners.rpc_ws,
    apiToken,
    rpcLimits: rpcLimits(config),
    rpcHistory: { onDemand: rpcHistory !== null, locator: rpcHistory?.locator ?? false },
    liveSource: config.sources.live.kind,
  };
  const rpcArgs: RpcArgs = {
    httpAddress: config.listeners.rpc_http,
    wsAddress: config.listeners.rpc_ws,
    dataDir,
    drainMs: Math.floor(shutdownMs / 2),
    chain: { chainId: spec.chainId, schedule: spec.schedule, genesis: spec.genesis },
    network: spec.network,
    limits: rpcLimits(config),
    blockCache: { entries: config.rpc.block_cache_entries, bytes: config.rpc.block_cache_bytes },
    processors,
    pageLimits: { defaultPageLimit: config.limits.default_page_limit, maxPageLimit: config.limits.max_page_limit, maxBlockRange: config.limits.max_block_range },
    history: rpcHistory,
  };
  // Every actor that follows the journal gets its notices: the processors and the JSON-RPC listeners (subscriptions).
  const chainArgs: ChainArgs = { dataDir, maxReorgDepth: config.chain.max_reorg_depth, processors: [...processors.map((p) => processorLane(p.id)), ...rpcActors] };
  const single = (budget: ActorBudget) => ({ ...budget, instances: 1 });
  const outboxArgs: OutboxArgs = {
    dataDir, chainId: spec.chainId, pruneIntervalMs: config.retention.prune_interval_seconds * 1000,
    retention: config.processors.map((p) => ({ processor: p.id, instance: p.instance ?? p.id, retainChanges: p.retain_changes })),
    ...(jetstream.enabled ? { publication: { instances: config.processors.filter((p) => p.delivery).map((p) => p.instance ?? p.id), outboxMaxBytes: config.budgets.outbox.max_bytes } } : {}),
  };
  const snapshots = config.snapshots;
  const snapshotsArgs: SnapshotsArgs = {
    dataDir, chainId: spec.chainId, processors, sweepIntervalSeconds: snapshots.sweep_interval_seconds, tombstoneSeconds: snapshots.tombstone_seconds,
    limits: { ttlSeconds: snapshots.ttl_seconds, maxRows: snapshots.max_rows, maxBytes: snapshots.max_bytes, maxActive: snapshots.max_active, maxBlockRange: config.limits.max_block_range },
  };
  return [
    sourceLane(config, dataDir, shutdownMs, spec, custom),
    { lane: 'finality', required: true, policy: restartPolicy(config.actors.finality), children: children('finality', 'finality/actor.js', single(config.actors.finality), shutdownMs, () => ({ ...finalityArgs(config, spec), dataDir })) },
    { lane: 'chain', required: true, policy: restartPolicy(config.actors.chain), children: children('chain', 'chain/actor.js', single(config.actors.chain), shutdownMs, () => chainArgs) },
    ...processors.map((p): LaneSpec => {
      const args: ProcessorArgs = { ...processorArgs(config, dataDir, spec, p, jetstream.enabled ? [...listeners, 'publisher'] : listeners), ...coldBackfillSourceOf(config, p.id), ...(seeds.has(p.id) ? { seedSavepoint: seeds.get(p.id)! } : {}) };
      return processorLaneSpec(config, processorLane(p.id), args, shutdownMs);
    }),
    ...replacements.map((replacement) => replacementLane(config, dataDir, spec, custom, replacement)),
    ...(jetstream.enabled ? [publisherLane(config, dataDir, spec, shutdownMs, natsSecrets, processors)] : []),
    { lane: 'outbox', required: true, policy: restartPolicy(config.actors.outbox), children: children('outbox', 'outbox/actor.js', single(config.actors.outbox), shutdownMs, () => outboxArgs) },
    { lane: 'snapshots', required: false, policy: restartPolicy(config.actors.snapshots), children: children('snapshots', 'snapshots/actor.js', single(config.actors.snapshots), shutdownMs, () => snapshotsArgs) },
    { lane: 'history', required: false, policy: restartPolicy(config.actors.history), children: children('history', 'history/actor.js', single(config.actors.history), shutdownMs, () => historyArgs) },
    { lane: 'listener', required: true, policy: restartPolicy(config.actors.listener), children: children('listener', 'listener/actor.js', config.actors.listener, shutdownMs, () => listenerArgs) },
    { lane: 'rpc', required: true, policy: restartPolicy(config.actors.rpc), children: children('rpc', 'rpc/actor.js', config.actors.rpc, shutdownMs, () => rpcArgs) },
  ];
}

/** Stop order: listeners stop accepting first, then the source, the history lane (before the processors it asks), finality, then the writers finish their transactions. */
export const STOP_ORDER = ['listener', 'rpc', 'source', 'history', 'finality', 'chain'];
/** Stopped after every other lane: the publisher follows the processors' change logs, so it stops once they committed their last block. */
export const STOP_LAST = ['publisher'];
