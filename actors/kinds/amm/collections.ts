/** The amm kind's collection for the generic entity API: `pools`, one row per pool, in address order. */
import type { CollectionDescription, CollectionRow } from '../sdk/tables.js';
import { parsePool, POOL_KEY_BYTES, POOL_KEY_PREFIX } from './pools.js';

export const AMM_CHANGE_SCHEMA = 'amm.v1';

function rowOf(key: Buffer, value: Buffer): CollectionRow {
  const row = parsePool(value);
  return { key, value, position: key, meta: { blockNumber: row.lastChange.blockNumber, blockHash: row.lastChange.blockHash as `0x${string}`, timestamp: row.lastChange.timestamp ?? null, finality: row.finality } };
}

const RANGE = { start: Buffer.of(POOL_KEY_PREFIX), end: Buffer.of(POOL_KEY_PREFIX + 1) };

export const POOLS_COLLECTION: CollectionDescription = {
  name: 'pools',
  description: 'One AmmPool per pool seen (Uniswap V2 pair or V3 pool), keyed by address; block bounds select by the last change.',
  schema: `${AMM_CHANGE_SCHEMA}/AmmPool`,
  owns: (key) => key.length === POOL_KEY_BYTES && key[0] === POOL_KEY_PREFIX,
  get(entities, key) {
    const value = entities.get(key);
    return value ? rowOf(key, value) : undefined;
  },
  *scan(entities, scan) {
    const start = scan.after === null ? RANGE.start : Buffer.concat([scan.after, Buffer.of(0)]);
    for (const { key, value } of entities.getRange({ start, end: RANGE.end })) {
      const row = rowOf(key, value);
      const n = row.meta.blockNumber!;
      if ((scan.fromBlock === null || n >= scan.fromBlock) && (scan.toBlock === null || n <= scan.toBlock)) yield row;
    }
  },
  bounds(entities) {
    let bounds: { fromBlock: number; toBlock: number } | null = null;
    for (const { value } of entities.getRange(RANGE)) {
      const n = parsePool(value).lastChange.blockNumber;
      bounds = bounds === null ? { fromBlock: n, toBlock: n } : { fromBlock: Math.min(bounds.fromBlock, n), toBlock: Math.max(bounds.toBlock, n) };
    }
    return bounds;
  },
};
