/**
 * The devnet source's memory across restarts (`devnet.blocks`): each canonical block it produced,
 * with whatever its generator needs to build the next one, keyed by number. Only the newest
 * `retain` heights are kept, so a restart loads a bounded record instead of regenerating the chain
 * from genesis (which grew with the chain). The values are the generator's own records; this
 * module only keys, writes and prunes them.
 */
import type { Store } from './store.js';
import { decodeU64KeyAsNumber, u64Key } from './keys.js';

export interface DevnetBlockRecord<T> {
  readonly number: number;
  readonly value: T;
}

/** Writes `records` (a new block, or a reorg's branch: they replace what is at their heights) and drops heights below `keepFrom`. */
export function saveDevnetBlocks<T>(store: Store, records: readonly DevnetBlockRecord<T>[], keepFrom: number): Promise<void> {
  const table = store.devnetBlocks();
  return store.write(() => {
    for (const { number, value } of records) table.put(u64Key(number), value);
    for (const key of table.getKeys({ end: u64Key(Math.max(0, keepFrom)) })) table.remove(key);
  });
}

/** The stored records from the highest height down, contiguous heights only, at most `limit`; newest last. */
export function loadDevnetBlocks<T>(store: Store, limit: number): DevnetBlockRecord<T>[] {
  const table = store.devnetBlocks();
  const records: DevnetBlockRecord<T>[] = [];
  for (const { key, value } of table.getRange({ reverse: true, limit })) {
    const number = decodeU64KeyAsNumber(key);
    if (records.length > 0 && number !== records[records.length - 1]!.number - 1) break;
    records.push({ number, value: value as T });
  }
  return records.reverse();
}
