/**
 * What the root's store gauges (metrics.ts) read from the store and the data directory's filesystem
 * at scrape time, for the alert rules in ops/alerts.yml (spec §8's suggested thresholds): filesystem
 * size and free bytes of `data_dir`, the LMDB file's size, the chain head and finalized block, the
 * byte totals the budgets bound, each processor's head, and how long each of those has not moved.
 *
 * "Not moved for" is measured by the root: it remembers when a scrape first saw the current value,
 * so its resolution is the scrape interval. The expected block interval comes from the stored
 * canonical headers (their mean timestamp step over the last blocks), so the processor-stall alert
 * needs no per-chain setting.
 */
import { statfsSync, statSync } from 'node:fs';
import { join } from 'node:path';
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

/** A value per processor instance (the `processor` label). */
export interface PerProcessor {
  readonly processor: string;
  readonly value: number;
}

/** The store's readings, each taken when a scrape asks for it. */
export interface StoreReadings {
  readonly filesystemSizeBytes: () => number;
  readonly filesystemFreeBytes: () => number;
  readonly storeSizeBytes: () => number;
  /** null: no canonical block yet. */
  readonly chainHead: () => number | null;
  /** null: nothing finalized yet. */
  readonly finalizedBlock: () => number | null;
  readonly finalizedAgeSeconds: () => number;
  readonly expectedBlockIntervalSeconds: () => number;
  /** Instances holding artifacts: their retained and pending bytes. */
  readonly artifactBytes: () => Array<{ readonly processor: string; readonly retained: number; readonly pending: number }>;
  readonly pendingDeltaBytes: () => PerProcessor[];
  /** Backfill-subscription streams summed as "backfill-subscriptions". */
  readonly outboxBytes: () => PerProcessor[];
  /** Followed instances that cover a block. */
  readonly processorHeads: () => PerProcessor[];
  readonly processorHeadAges: () => PerProcessor[];
}

export function storeReadings(source: StoreMetricsSource): StoreReadings {
  const { store, dataDir } = source;
  const unfollowed = new Set(source.unfollowed ?? []);
  const now = source.now ?? (() => Date.now() / 1000);
  const unmoved = new Unmoved(now);
  const finalizedBlock = finalizedTracker(store);
  const instances = () => store.processorInstances().filter((name) => !isStreamInstance(name));
  return {
    filesystemSizeBytes: () => { const fs = statfsSync(dataDir); return fs.blocks * fs.bsize; },
    filesystemFreeBytes: () => { const fs = statfsSync(dataDir); return fs.bavail * fs.bsize; },
    storeSizeBytes: () => statSync(join(store.path, 'data.mdb')).size,
    chainHead: () => canonicalHeadNumber(store),
    finalizedBlock,
    finalizedAgeSeconds: () => unmoved.age('finalized', String(finalizedBlock())),
    expectedBlockIntervalSeconds: () => {
      const head = canonicalHeadNumber(store);
      const back = head === null ? null : Math.max(0, head - INTERVAL_WINDOW);
      const [to, from] = head === null || back === null || back === head ? [undefined, undefined] : [headerTimestamp(store, head), headerTimestamp(store, back)];
      return to !== undefined && from !== undefined && to > from ? (to - from) / (head! - back!) : source.fallbackBlockIntervalSeconds;
    },
    artifactBytes: () => instances().flatMap((instance) => {
      const totals = readTotals(store.processor(instance).artifacts);
      if (totals.retainedCount === 0 && totals.pendingCount === 0 && totals.retainedBytes === 0) return [];
      return [{ processor: instance, retained: totals.retainedBytes, pending: totals.pendingBytes }];
    }),
    pendingDeltaBytes: () => instances().map((instance) => ({ processor: instance, value: tableBytes(store.processor(instance).undo) })),
    outboxBytes: () => {
      const values: PerProcessor[] = [];
      let streams = 0;
      for (const instance of store.processorInstances()) {
        // Streams share one table (store/stream-tables.ts), counted once below; an unmigrated one has its own.
        const changes = store.processor(instance).changes;
        if (isStreamInstance(instance)) streams += 'getStats' in changes ? tableBytes(changes) : 0;
        else values.push({ processor: instance, value: tableBytes(changes) });
      }
      const shared = store.streamTable('changes');
      if (shared !== undefined) streams += tableBytes(shared);
      if (streams > 0) values.push({ processor: 'backfill-subscriptions', value: streams });
      return values;
    },
    processorHeads: () => followedInstances(store, unfollowed).flatMap((instance) => {
      const { head } = processorHead(store, instance);
      return head === null ? [] : [{ processor: instance, value: head }];
    }),
    processorHeadAges: () => followedInstances(store, unfollowed).map((instance) => {
      const { head, journalSequence } = processorHead(store, instance);
      return { processor: instance, value: unmoved.age(`processor:${instance}`, `${journalSequence}:${head}`) };
    }),
  };
}
