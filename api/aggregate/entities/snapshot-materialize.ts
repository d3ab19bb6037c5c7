/**
 * Materializes one query-and-follow snapshot (store/snapshots.ts) inside ONE LMDB write transaction:
 * coverage, the resolved filter, every matching row and the change boundary are read in it, and the
 * rows are copied into `snapshot.rows` in it. LMDB has one writer at a time, so the processor's next
 * commit starts after this transaction ends and every change it writes has a sequence strictly after
 * the boundary (spec §4.4 rule 6). Over `max_rows` or `max_bytes` the transaction is abandoned and
 * the request answers 413 `query_too_expensive`: nothing partial is ever stored.
 */
import { randomBytes } from 'node:crypto';
import { CodedError } from '../../../runtime/errors.js';
import { describeCoverage, readProgress, readRanges, INITIAL_PROGRESS } from '../../../store/coverage.js';
import type { ProcessorTables, Store } from '../../../store/store.js';
import type { CollectionDescription } from '../../../store/collection.js';
import { listSnapshots, snapshotRowKey, SNAPSHOT_ID_BYTES, type SnapshotRecord } from '../../../store/snapshots.js';
import { HttpError } from '../../errors.js';
import type { ConfiguredProcessor } from '../configured-processors.js';
import { requireDelivery } from '../configured-processors.js';
import { liveHead } from '../processor-reader.js';
import { checkRetained, resolveFilter, rowMatches, type FilterParams } from './entity-query.js';
import { entityResultBytes } from './entity-result.js';
import { readBoundary } from './read-boundary.js';

export interface SnapshotLimits {
  readonly ttlSeconds: number;
  readonly maxRows: number;
  readonly maxBytes: number;
  readonly maxActive: number;
  readonly maxBlockRange: number;
}

/** `collections`: those of the processor's kind (the caller holds the kind registry). */
export function materializeSnapshot(store: Store, chainId: number, processor: ConfiguredProcessor, collections: readonly CollectionDescription[], collectionName: string, params: FilterParams, limits: SnapshotLimits, now: number): SnapshotRecord {
  requireDelivery(processor);
  const collection = collections.find((c) => c.name === collectionName);
  if (!collection) throw new HttpError('not_found', `processor '${processor.id}' has no collection '${collectionName}'`, { processor: processor.id });
  // Opening a table is not allowed inside the transaction; a processor whose lane has not created its tables yet holds nothing.
  const tables: ProcessorTables | null = store.processorInstances().includes(processor.instance) ? store.processor(processor.instance) : null;
  const idBytes = randomBytes(SNAPSHOT_ID_BYTES);
  const id = idBytes.toString('base64url');
  // transactionSync, not transaction: lmdb-js aborts a synchronous transaction whose callback throws,
  // so an oversized snapshot leaves no rows behind (an async `transaction` would commit what was written).
  return store.env.transactionSync(() => {
    const active = listSnapshots(store.snapshots).filter((s) => s.state === 'active' && s.expiresAt > now).length;
    if (active >= limits.maxActive) {
      throw new HttpError('query_too_expensive', `${active} snapshots are open, the configured maximum (snapshots.max_active); release one with DELETE or wait for expiry`, { maxActive: limits.maxActive }, 429);
    }
    const ranges = tables ? readRanges(tables.coverage) : [];
    const stored = tables ? readProgress(tables.state) : INITIAL_PROGRESS;
    const progress = stored.configuredStartBlock === null && processor.startBlock !== null ? { ...stored, configuredStartBlock: processor.startBlock } : stored;
    const retained = { ranges, windowStart: progress.configuredStartBlock };
    const filter = resolveFilter(params, retained, limits.maxBlockRange);
    const requested = filter.explicit && filter.fromBlock !== null && filter.toBlock !== null ? { fromBlock: filter.fromBlock, toBlock: filter.toBlock } : undefined;
    const head = liveHead(store);
    const coverage = describeCoverage({ chainId, ranges, progress, liveHeadBlock: head?.number ?? null, liveHeadHash: head?.hash ?? null, ...(requested ? { requested } : {}), orderedState: processor.info.ordering === 'ordered_state' });
    checkRetained(processor, filter, retained, () => coverage);
    let rowCount = 0;
    let valueBytes = 0;
    if (tables) {
      for (const row of collection.scan(tables.entities, { fromBlock: filter.fromBlock, toBlock: filter.toBlock, after: null, finalizedNumber: stored.finalizedNumber })) {
        if (!rowMatches(filter, row.meta)) continue;
        const bytes = entityResultBytes(collection, row);
        rowCount += 1;
        valueBytes += bytes.length;
        if (rowCount > limits.maxRows || valueBytes > limits.maxBytes) throw tooLarge(rowCount, valueBytes, limits);
        store.snapshotRows.put(snapshotRowKey(idBytes, rowCount - 1), bytes);
      }
    }
    const boundary = readBoundary({ epoch: store.epoch, chainId }, processor, tables);
    const pageFields = {
      coverage,
      snapshotId: id,
      ...boundary,
      rowCount,
      valueBytes,
      retainedBounds: tables ? collection.bounds(tables.entities) : null,
      expiresAt: new Date(now + limits.ttlSeconds * 1000).toISOString(),
    };
    const record: SnapshotRecord = {
      id, processorId: processor.id, instance: processor.instance, collection: collection.name, state: 'active',
      createdAt: now, expiresAt: now + limits.ttlSeconds * 1000, forgetAt: null, rowCount, valueBytes, filter, pageFieldsJson: JSON.stringify(pageFields),
    };
    store.snapshots.put(id, record);
    return record;
  });
}

function tooLarge(rowCount: number, valueBytes: number, limits: SnapshotLimits): CodedError {
  return new HttpError('query_too_expensive', `the snapshot exceeds the configured limit (snapshots.max_rows ${limits.maxRows}, snapshots.max_bytes ${limits.maxBytes}); narrow it with block or timestamp bounds`, {
    rowsSoFar: rowCount, bytesSoFar: valueBytes, maxRows: limits.maxRows, maxBytes: limits.maxBytes,
  });
}
