/**
 * Metrics read from the store and the data directory's filesystem at scrape time, for the alert
 * rules in ops/alerts.yml (spec §8's suggested thresholds): filesystem size and free bytes of
 * `data_dir`, the LMDB file's size, the chain head and finalized block, each processor's head, and
 * how long each of those has not moved.
 *
 * "Not moved for" is measured by the root: it remembers when a scrape first saw the current value,
 * so its resolution is the scrape interval. The expected block interval comes from the stored
 * canonical headers (their mean timestamp step over the last blocks), so the processor-stall alert
 * needs no per-chain setting.
 */
import { statfsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Gauge, type Registry } from 'prom-client';
import { decodeHeader } from '../../net/eth/header.js';
import { decodeJournalMove } from '../../store/journal.js';
import { decodeU64KeyAsNumber, u64Key } from '../../store/keys.js';
import { getCanonicalHash, getHeaderBytes } from '../../store/chain-material.js';
import { readProgress } from '../../store/coverage.js';
import type { Store } from '../../store/store.js';
import { isStreamInstance } from '../../store/backfill-subscriptions.js';
import { rebuildOfInstance } from '../../store/rebuilds.js';
import { readTotals } from '../../store/artifacts.js';
import { canonicalHeadNumber } from '../../store/chain-heads.js';

/** Blocks over which the expected block interval is averaged. */
const INTERVAL_WINDOW = 64;

export interface StoreMetricsSource {
  readonly store: Store;
  readonly dataDir: string;
  /** Used until the store holds two canonical blocks (the devnet's configured block time, else 12 s). */
  readonly fallbackBlockIntervalSeconds: number;
  /** Wall clock in seconds (tests pass their own). */
  readonly now?: () => number;
  /** `[budgets.artifacts]` max_bytes (absent: the maximum is not reported). */
  readonly artifactMaxBytes?: number;
  /** `[budgets.pending_deltas] max_bytes` and `[budgets.outbox] max_bytes` (absent: no budget gauges). */
  readonly budgets?: { readonly pendingDeltaBytes: number; readonly outboxBytes: number };
  /** Instances that follow no chain (replay targets, `[processors.artifacts] replay_from`): no head gauges. */
  readonly unfollowed?: readonly string[];
}

/**
 * Instances that follow the chain: not backfill-subscription streams (store/backfill-subscriptions.ts: change logs,
 * not processors), not the replacement of a cancelled rebuild (its lane is stopped), not a replay target (its
 * blocks come only from replays): never a stale head.
 */
function followedInstances(store: Store, unfollowed: ReadonlySet<string>): string[] {
  return store.processorInstances().filter((name) => !isStreamInstance(name) && !unfollowed.has(name) && rebuildOfInstance(store, name)?.state !== 'cancelled');
}

/** Bytes LMDB holds for one table: its branch, leaf and overflow pages. */
export function tableBytes(table: { getStats(): unknown }): number {
  const stats = table.getStats() as { pageSize: number; treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number };
  return (stats.treeBranchPageCount + stats.treeLeafPageCount + stats.overflowPages) * stats.pageSize;
}

/** A value and when a scrape first saw it. */
class Unmoved {
  private readonly seen = new Map<string, { value: string; since: number }>();
  constructor(private readonly now: () => number) {}

  /** Seconds since `key` last changed value (0 the first time it is seen). */
  age(key: string, value: string): number {
    const t = this.now();
    const entry = this.seen.get(key);
    if (entry === undefined || entry.value !== value) {
      this.seen.set(key, { value, since: t });
      return 0;
    }
    return t - entry.since;
  }
}

function headerTimestamp(store: Store, number: number): number | undefined {
  const hash = getCanonicalHash(store, number);
  const bytes = hash ? getHeaderBytes(store, hash) : undefined;
  return bytes ? decodeHeader(bytes).timestamp : undefined;
}

/**
 * The last finalized block the journal recorded. Finality never moves back, so each call scans only
 * the moves appended since the previous one, newest first, up to the newest finalize move.
 */
function finalizedTracker(store: Store): () => number | null {
  let scannedThrough: number | null = null;
  let finalized: number | null = null;
  return () => {
    let newest: number | null = null;
    const moves = scannedThrough === null ? store.chain.journal.getRange({ reverse: true }) : store.chain.journal.getRange({ reverse: true, end: u64Key(scannedThrough) });
    for (const { key, value } of moves) {
      newest ??= decodeU64KeyAsNumber(key);
      const move = decodeJournalMove(value);
      if (move.op === 'finalize') {
        finalized = move.number;
        break;
      }
    }
    if (newest !== null) scannedThrough = newest;
    return finalized;
  };
}

function processorHead(store: Store, instance: string): { head: number | null; journalSequence: number } {
  const tables = store.processor(instance);
  let head: number | null = null;
  for (const { value } of tables.coverage.getRange({ reverse: true, limit: 1 })) head = (value as { to: number }).to;
  return { head, journalSequence: readProgress(tables.state).journalSequence };
}

export function registerStoreMetrics(registry: Registry, source: StoreMetricsSource): void {
  const { store, dataDir } = source;
  const unfollowed = new Set(source.unfollowed ?? []);
  const now = source.now ?? (() => Date.now() / 1000);
  const unmoved = new Unmoved(now);
  const finalizedBlock = finalizedTracker(store);
  const registers = [registry];
  new Gauge({
    name: 'chain_node_data_dir_filesystem_size_bytes', help: 'Size of the filesystem holding data_dir', registers,
    collect() { const fs = statfsSync(dataDir); this.set(fs.blocks * fs.bsize); },
  });
  new Gauge({
    name: 'chain_node_data_dir_filesystem_free_bytes', help: 'Bytes of the filesystem holding data_dir available to the node (unprivileged free space)', registers,
    collect() { const fs = statfsSync(dataDir); this.set(fs.bavail * fs.bsize); },
  });
  new Gauge({
    name: 'chain_node_store_size_bytes', help: 'Size of the LMDB database file (data_dir/db/data.mdb)', registers,
    collect() { this.set(statSync(join(store.path, 'data.mdb')).size); },
  });
  new Gauge({
    name: 'chain_node_chain_head_block', help: 'Highest canonical block in the chain journal', registers,
    collect() { const head = canonicalHeadNumber(store); if (head === null) this.reset(); else this.set(head); },
  });
  new Gauge({
    name: 'chain_node_chain_finalized_block', help: 'Finalized block recorded in the chain journal', registers,
    collect() { const finalized = finalizedBlock(); if (finalized === null) this.reset(); else this.set(finalized); },
  });
  new Gauge({
    name: 'chain_node_chain_finalized_age_seconds', help: 'Seconds since the finalized block last advanced (as seen by scrapes; counts from the first scrape)', registers,
    collect() { this.set(unmoved.age('finalized', String(finalizedBlock()))); },
  });
  new Gauge({
    name: 'chain_node_expected_block_interval_seconds', help: 'Mean timestamp step of the last stored canonical blocks (the chain\'s block interval)', registers,
    collect() {
      const head = canonicalHeadNumber(store);
      const back = head === null ? null : Math.max(0, head - INTERVAL_WINDOW);
      const [to, from] = head === null || back === null || back === head ? [undefined, undefined] : [headerTimestamp(store, head), headerTimestamp(store, back)];
      this.set(to !== undefined && from !== undefined && to > from ? (to - from) / (head! - back!) : source.fallbackBlockIntervalSeconds);
    },
  });
  // Spec §4.2: current and maximum artifact bytes, reported separately.
  new Gauge({
    name: 'chain_node_artifact_bytes', help: 'Artifact bytes a processor instance holds: retained finalized records and pending included-block candidates (state)', labelNames: ['processor', 'state'], registers,
    collect() {
      this.reset();
      for (const instance of store.processorInstances().filter((name) => !isStreamInstance(name))) {
        const totals = readTotals(store.processor(instance).artifacts);
        if (totals.retainedCount === 0 && totals.pendingCount === 0 && totals.retainedBytes === 0) continue;
        this.set({ processor: instance, state: 'retained' }, totals.retainedBytes);
        this.set({ processor: instance, state: 'pending' }, totals.pendingBytes);
      }
    },
  });
  if (source.artifactMaxBytes !== undefined) {
    new Gauge({ name: 'chain_node_artifact_budget_bytes', help: '[budgets.artifacts] max_bytes: the most artifact bytes (retained plus pending) all processors may hold together', registers }).set(source.artifactMaxBytes);
  }
  new Gauge({
    name: 'chain_node_pending_delta_bytes', help: 'Bytes of the inverse writes kept for blocks not yet finalized (undo tables), by processor instance', labelNames: ['processor'], registers,
    collect() {
      this.reset();
      for (const instance of store.processorInstances().filter((name) => !isStreamInstance(name))) this.set({ processor: instance }, tableBytes(store.processor(instance).undo));
    },
  });
  new Gauge({
    name: 'chain_node_outbox_bytes', help: 'Bytes of the change logs retained for delivery, by processor instance (backfill-subscription streams summed as "backfill-subscriptions")', labelNames: ['processor'], registers,
    collect() {
      this.reset();
      let streams = 0;
      for (const instance of store.processorInstances()) {
        // Streams share one table (store/stream-tables.ts), counted once below; an unmigrated one has its own.
        const changes = store.processor(instance).changes;
        if (isStreamInstance(instance)) streams += 'getStats' in changes ? tableBytes(changes) : 0;
        else this.set({ processor: instance }, tableBytes(changes));
      }
      const shared = store.streamTable('changes');
      if (shared !== undefined) streams += tableBytes(shared);
      if (streams > 0) this.set({ processor: 'backfill-subscriptions' }, streams);
    },
  });
  if (source.budgets) {
    const { pendingDeltaBytes, outboxBytes } = source.budgets;
    new Gauge({ name: 'chain_node_pending_delta_budget_bytes', help: 'The pending-delta budget ([budgets.pending_deltas] max_bytes), across all processor instances', registers, collect() { this.set(pendingDeltaBytes); } });
    new Gauge({ name: 'chain_node_outbox_budget_bytes', help: 'The outbox budget ([budgets.outbox] max_bytes), across all change logs', registers, collect() { this.set(outboxBytes); } });
  }
  new Gauge({
    name: 'chain_node_processor_head_block', help: 'Highest block a processor instance covers', labelNames: ['processor'], registers,
    collect() {
      this.reset();
      for (const instance of followedInstances(store, unfollowed)) {
        const { head } = processorHead(store, instance);
        if (head !== null) this.set({ processor: instance }, head);
      }
    },
  });
  new Gauge({
    name: 'chain_node_processor_head_age_seconds', help: 'Seconds since a processor instance last applied a journal move (as seen by scrapes; counts from the first scrape)', labelNames: ['processor'], registers,
    collect() {
      this.reset();
      for (const instance of followedInstances(store, unfollowed)) {
        const { head, journalSequence } = processorHead(store, instance);
        this.set({ processor: instance }, unmoved.age(`processor:${instance}`, `${journalSequence}:${head}`));
      }
    },
  });
}
