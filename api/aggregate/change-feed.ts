/**
 * Where the delivery routes (`/changes`, `/changes/head`, `/stream`) read a processor's change feed from: the
 * node's own store (`storeChangeFeed`, here), or a relay's copy of the JetStream stream (relay/). Both hand out
 * the same stored envelope bytes and cursors, so a client may move between them.
 */
import { readChanges, type StoredChange } from '../../store/change-log.js';
import type { ProcessorCoverage } from '../../store/coverage.js';
import type { Store } from '../../store/store.js';
import type { CursorOwner } from './change-position.js';
import type { ConfiguredProcessor } from './configured-processors.js';
import { changeBounds, processorTables, readCoverage, type ChangeBounds } from './processor-reader.js';

export interface ChangeFeed {
  readonly chainId: number;
  /** What a cursor of this feed must name: the epoch, chain and instance serving `processor` now. */
  owner(processor: ConfiguredProcessor): CursorOwner;
  bounds(processor: ConfiguredProcessor): ChangeBounds;
  /** Changes with sequence > `after`, oldest first, at most `limit`; fewer (or none) when no more are at hand yet. */
  read(processor: ConfiguredProcessor, after: bigint, limit: number): StoredChange[];
  coverage(processor: ConfiguredProcessor): ProcessorCoverage;
  /** Makes later reads see the newest commits (a long-lived reader such as the SSE hub calls it before a pass). */
  refresh(): void;
  /**
   * A feed that keeps changes elsewhere (a relay) fetches what `read(processor, after, limit)` will need; absent or
   * undefined: `read` has it at hand. A page route awaits it, so a page is never cut short by the fetch.
   */
  prepare?(processor: ConfiguredProcessor, after: bigint, limit: number): Promise<void> | undefined;
}

export function storeChangeFeed(store: Store, chainId: number): ChangeFeed {
  return {
    chainId,
    owner: (processor) => ({ epoch: store.epoch, chainId, instance: processor.instance }),
    bounds: (processor) => changeBounds(processor, processorTables(store, processor.instance)),
    read: (processor, after, limit) => {
      const tables = processorTables(store, processor.instance);
      return tables ? readChanges({ changes: tables.changes, epoch: store.epoch, chainId, instance: processor.instance }, after, limit) : [];
    },
    coverage: (processor) => readCoverage(store, chainId, processor),
    refresh: () => store.env.resetReadTxn(),
  };
}
