/**
 * The root actor (`node`), on the main thread: takes the data-directory lock, creates or opens
 * the store, starts every lane under its supervisor, answers the lanes' questions about readiness
 * and metrics, and shuts everything down in order on SIGINT/SIGTERM.
 *
 * Accepts NodeInbox (messages.ts; replies NodeReplies), from lanes: ask `readiness` → ReadinessReport, ask `metrics` → Prometheus text,
 * `listening {listener, address, port}`, ask `rebuild.lane` {processor, instance, fromBlock, source} → {started}
 * (from `history`: starts a rebuild's replacement lane, actors/history/rebuilds.ts; at start, every replacement
 * recorded in the store and not cancelled gets its lane with the configured ones), ask `rebuild.stop` {instance} →
 * {stopped} (from `history`, when a rebuild is cancelled: stops the replacement's lane and removes it).
 * Sends every listener `lanes` (LaneTroublesNotice, actors/listener/messages.ts) when a lane's health changes.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ActorSystem } from '../../runtime/system.js';
import { unknownTag } from '../../runtime/actor.js';
import type { NodeInbox, NodeReplies } from './messages.js';
import type { ListenerInbox } from '../listener/messages.js';
import type { LaneSpec } from '../../runtime/supervisor.js';
import { createTaskPool } from '../../runtime/pool.js';
import { createLogger, errorFields, type Logger } from '../../runtime/log.js';
import { onStopSignals } from '../../runtime/stop-signals.js';
import { acquireDataDirLock } from '../../store/lock.js';
import { openStore } from '../../store/store.js';
import { ensureChainIdentity } from '../../store/chain-identity.js';
import { migrateOwnStreamTables } from '../../store/backfill-subscriptions.js';
import { epochToHex } from '../../store/meta.js';
import { ensureP2pSecret } from '../../store/secret.js';
import type { ReadinessReport } from '../../api/operational.js';
import { ConfigError, type LoadedConfig } from './config.js';
import { addressTaken } from '../../api/server.js';
import { buildLanes, replacementLane, processorLane, STOP_LAST, STOP_ORDER, type ReplacementInstance } from './lanes.js';
import { listRebuilds } from '../../store/rebuilds.js';
import { createRootMetrics } from './metrics.js';
import { installHttpGuard } from '../../api/http-guard.js';
import { startMapRelease, type MapRelease } from '../../store/map-release.js';
import { resolveChainSpec } from './chain-spec.js';
import { laneTroubles } from './lane-troubles.js';
import { finalityArgs } from '../finality/config.js';
import { describeCustomKinds } from '../kinds/kind-catalog.js';
import { resolveSeeds } from './seeds.js';
import { skippedHistorySources } from './history-sources.js';

export interface RunningNode {
  readonly system: ActorSystem;
  /** Resolves when the node has stopped. */
  readonly stopped: Promise<void>;
  /** Why the node stopped itself (a required lane missed the start watchdog), or null. */
  fatal(): string | null;
  stop(): Promise<void>;
}

export interface StartOptions {
  readonly log?: Logger;
  /** Lanes started after the configured ones (fault drills and tests of the supervision surface). */
  readonly extraLanes?: readonly LaneSpec[];
}

export async function startNode(loaded: LoadedConfig, options: StartOptions = {}): Promise<RunningNode> {
  const log = options.log ?? createLogger({ lane: 'node', level: loaded.config.log.level, maxLinesPerSecond: loaded.config.log.max_lines_per_second });
  const { config, dataDir } = loaded;
  const spec = await resolveChainSpec(config, loaded.configDir);
  finalityArgs(config, spec); // refuses a finality setting this chain cannot use before the store opens
  const seeds = resolveSeeds(config, loaded.configDir, spec); // refuses a savepoint that cannot seed its processor
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lock = acquireDataDirLock(dataDir, 'node');
  let store;
  try {
    await refuseTakenListeners(config.listeners);
    ensureP2pSecret(dataDir);
    store = openStore({ dataDir, chainId: spec.chainId });
    try {
      ensureChainIdentity(store, { genesisHash: spec.genesis.hash, ...(spec.generator ? { generator: spec.generator } : {}) });
    } catch (error) {
      await store.close();
      throw error;
    }
  } catch (error) {
    lock.release();
    throw error;
  }
  log.info('store open', { dataDir, storeEpoch: epochToHex(store.epoch), schemaVersion: store.schemaVersion, chainId: spec.chainId, network: spec.network });
  const movedStreams = await migrateOwnStreamTables(store);
  if (movedStreams.length > 0) log.info('backfill-subscription streams moved into the shared stream tables', { streams: movedStreams.length });
  for (const skipped of skippedHistorySources(config)) {
    log.warn('history source skipped: materialization jobs, backfill subscriptions, rebuilds and probes naming it are refused with this reason', { source: skipped.id, reason: skipped.reason });
  }
  const unguarded = installHttpGuard();
  if (unguarded !== null) log.warn('the HTTP guard is not active: requests the web server cannot parse (HTTP/1.0, no Host, 49+ header fields, unknown methods) get no answer; put the proxy of README "Behind a reverse proxy" in front', { reason: unguarded });

  const pool = createTaskPool({ module: fileURLToPath(new URL('./tasks.js', import.meta.url)), threads: config.runtime.pool_threads });
  const system = new ActorSystem({
    log, logLevel: config.log.level, logRate: config.log.max_lines_per_second, batching: config.runtime.message_batching, pool,
    startTimeoutMs: config.runtime.start_timeout_seconds * 1000,
  });
  const readiness = (): ReadinessReport => {
    const lanes = system.laneStatuses();
    return { ready: lanes.every((lane) => !lane.required || lane.state === 'ready'), lanes };
  };
  const fallbackBlockIntervalSeconds = config.sources.live.kind === 'devnet' ? config.devnet.block_time_ms / 1000 : 12;
  const mapRelease: { current: MapRelease | null } = { current: null };
  const metrics = createRootMetrics(system, () => readiness().ready, { store, dataDir, fallbackBlockIntervalSeconds, artifactMaxBytes: config.budgets.artifacts.max_bytes, budgets: { pendingDeltaBytes: config.budgets.pending_deltas.max_bytes, outboxBytes: config.budgets.outbox.max_bytes },
    unfollowed: config.processors.filter((p) => p.artifacts.replay_from !== undefined).map((p) => p.instance ?? p.id) }, () => mapRelease.current?.stats() ?? null);
  const processorIds = config.processors.map((p) => p.id);
  let pushedTroubles = '';
  const pushTroubles = (force = false) => {
    const troubles = laneTroubles(system.laneStatuses(), processorIds);
    const key = JSON.stringify(troubles);
    if (key === pushedTroubles && !force) return;
    pushedTroubles = key;
    const listeners = system.laneStatuses().find((lane) => lane.lane === 'listener')?.actors.filter((a) => a.running).map((a) => a.name) ?? [];
    for (const listener of listeners) {
      system.send<ListenerInbox>(listener, { type: 'lanes', troubles }).catch((error: Error) => log.debug('lane troubles not delivered', { listener, reason: error.message }));
    }
  };
  for (const event of ['status', 'restarting', 'escalated', 'lane-removed']) system.on(event, () => pushTroubles());
  system.handleRoot<NodeInbox>((message, from) => {
    switch (message.type) {
      case 'readiness':
        return readiness();
      case 'metrics':
        return metrics.text();
      case 'rebuild.lane': {
        const { processor, instance, fromBlock, source } = message;
        if (system.laneStatuses().some((lane) => lane.lane === processorLane(instance))) return { started: false } satisfies NodeReplies['rebuild.lane'];
        system.startLane(replacementLane(config, dataDir, spec, custom, { processor, instance, fromBlock, source }));
        log.info('rebuild replacement lane started', { processor, instance, fromBlock });
        return { started: true } satisfies NodeReplies['rebuild.lane'];
      }
      case 'rebuild.stop': {
        const instance = message.instance;
        return system.stopLane(processorLane(instance)).then((stopped): NodeReplies['rebuild.stop'] => {
          if (stopped) log.info('rebuild replacement lane stopped', { instance });
          return { stopped };
        });
      }
      case 'listening':
        log.info('listening', { listener: message.listener, address: message.address, port: message.port, actor: from });
        setImmediate(() => pushTroubles(true));
        return undefined;
      default:
        throw new Error(`the node does not accept '${unknownTag(message)}' (from ${from})`);
    }
  });
  system.on('escalated', (lane: string, reason: string) => log.error('lane failed; the node is not ready', { failedLane: lane, reason }));
  const custom = await describeCustomKinds(config.processors, loaded.configDir, dataDir);
  for (const [id, described] of custom) {
    if (described.error) log.error('custom processor kind does not load; its lane will fail', { processor: id, module: described.module, reason: described.error });
  }
  // Rebuilds' replacement instances run beside the configured ones (a processor no longer configured keeps its records
  // only; a cancelled rebuild's lane is never started again).
  const replacements = listRebuilds(store).filter((r) => r.state !== 'cancelled' && config.processors.some((p) => p.id === r.processor))
    .map((r): ReplacementInstance => ({ processor: r.processor, instance: r.instance, fromBlock: r.fromBlock, source: r.source }));
  for (const lane of [...buildLanes(config, dataDir, spec, loaded.apiToken, custom, seeds, replacements, loaded.natsSecrets), ...(options.extraLanes ?? [])]) system.startLane(lane);

  const stopMapRelease = startStoreMapRelease(dataDir, mapRelease, log);

  let resolveStopped!: () => void;
  const stopped = new Promise<void>((resolve) => { resolveStopped = resolve; });
  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      log.info('stopping');
      stopMapRelease();
      await system.stop(STOP_ORDER, STOP_LAST);
      await pool.destroy();
      await store.close();
      lock.release();
      log.info('stopped');
      resolveStopped();
    })();
    return stopping;
  };
  let fatal: string | null = null;
  system.on('start-timeout', (lane: string, actors: string[], required: boolean, timeoutSeconds: number) => {
    log.error('workers did not report ready within the start timeout', { timedOutLane: lane, actors, required, timeoutSeconds });
    pushTroubles();
    if (!required || fatal !== null) return;
    const budget = timeoutSeconds === config.runtime.start_timeout_seconds ? `runtime.start_timeout_seconds = ${timeoutSeconds}` : `its own start timeout of ${timeoutSeconds} s`;
    fatal = `required lane '${lane}' did not get ready within ${budget} (${actors.join(', ')})`;
    log.error('stopping: a required lane never got ready', { reason: fatal });
    void stop();
  });
  return { system, stopped, stop, fatal: () => fatal };
}

/**
 * Starts giving back the store map's residency (store/map-release.ts) on the main thread, which holds the store open
 * until after the returned stop runs. Says once why not when the addon is missing.
 */
function startStoreMapRelease(dataDir: string, holder: { current: MapRelease | null }, log: Logger): () => void {
  const job = startMapRelease({ dataDir, onError: (error) => log.warn('store map release failed; stopped', { reason: error.message }) });
  if (job.inactive !== null) log.info('store map release is not active: the store pages the node reads stay resident in its RSS', { reason: job.inactive });
  holder.current = job;
  return () => job.stop();
}

/**
 * Stops start-up when a listener's address is held by another process (another node, or anything
 * else): uWS would bind it anyway (SO_REUSEPORT) and share its traffic with that process.
 */
async function refuseTakenListeners(listeners: LoadedConfig['config']['listeners']): Promise<void> {
  const keys = ['api', 'rpc_http', 'rpc_ws'] as const;
  const problems = [];
  for (const key of keys) {
    const taken = await addressTaken(listeners[key]);
    if (taken !== null) problems.push({ key: `listeners.${key}`, value: JSON.stringify(listeners[key]), expected: `a free address (${taken})` });
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

/**
 * Ends the process at once when a graceful stop is given up. Not `process.exit`: it joins every
 * worker thread first, and a worker stuck in native code (runtime/worker-entry.ts describes the one
 * seen) never joins, so the process would hang instead of exiting. LMDB needs no clean close: every
 * commit is already durable.
 */
function killProcess(): never {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: SIGKILL was sent to this process');
}

/** Runs the node until SIGINT/SIGTERM, then stops it within the configured shutdown budget and exits 0. */
export async function runNode(loaded: LoadedConfig): Promise<void> {
  const log = createLogger({ lane: 'node', level: loaded.config.log.level, maxLinesPerSecond: loaded.config.log.max_lines_per_second });
  const node = await startNode(loaded, { log });
  onStopSignals({
    log,
    second: (signal) => {
      log.warn('second signal: exiting without a graceful stop', { signal });
      killProcess();
    },
    first: (signal) => {
      log.info('signal received', { signal });
      const budgetMs = loaded.config.runtime.shutdown_timeout_seconds * 1000;
      setTimeout(() => {
        log.error('graceful stop exceeded its budget; killing the process', { budgetMs });
        killProcess();
      }, budgetMs + 2000).unref();
      node.stop().then(() => process.exit(0), (error) => {
        log.error('stop failed', errorFields(error));
        process.exit(1);
      });
    },
  });
  void node.stopped.then(() => {
    const fatal = node.fatal();
    if (fatal === null) return;
    process.stderr.write(`chain-node: ${fatal}\n`);
    process.exit(1);
  });
}
