/** The erc20 kind's collection for the generic entity API: `balances`, one row per (token, holder), in key order. */
import type { BinaryTable, CollectionDescription, CollectionRow, CollectionRowMeta } from '../sdk/tables.js';
import { BALANCE_KEY_BYTES, BALANCE_KEY_PREFIX, decodeRow, rowJson, rowMeta } from './balances.js';

export const ERC20_CHANGE_SCHEMA = 'erc20.v1';

function metaOf(value: Buffer, finalizedNumber: number | null): CollectionRowMeta {
  const { lastChange, finality } = rowMeta(value, finalizedNumber);
  return { blockNumber: lastChange.blockNumber, blockHash: lastChange.blockHash as `0x${string}`, timestamp: lastChange.timestamp ?? null, finality };
}

function inBounds(meta: CollectionRowMeta, fromBlock: number | null, toBlock: number | null): boolean {
  if (fromBlock === null && toBlock === null) return true;
  const n = meta.blockNumber!;
  return (fromBlock === null || n >= fromBlock) && (toBlock === null || n <= toBlock);
}

/** The row as the entity API serves it: its JSON (stored rows are compact, and their finality derived: see balances.ts). */
function rowOf(key: Buffer, value: Buffer, finalizedNumber: number | null): CollectionRow {
  return { key, value: Buffer.from(rowJson(decodeRow(key, value, finalizedNumber))), position: key, meta: metaOf(value, finalizedNumber) };
}

export const BALANCES_COLLECTION: CollectionDescription = {
  name: 'balances',
  description: 'One Erc20Balance per (token, holder) with a non-zero balance, keyed by token ‖ holder; block bounds select by the last change.',
  schema: `${ERC20_CHANGE_SCHEMA}/Erc20Balance`,
  owns: (key) => key.length === BALANCE_KEY_BYTES && key[0] === BALANCE_KEY_PREFIX,
  get(entities, key, finalizedNumber) {
    const value = entities.get(key);
    return value ? rowOf(key, value, finalizedNumber) : undefined;
  },
  *scan(entities, scan) {
    const start = scan.after === null ? Buffer.of(BALANCE_KEY_PREFIX) : Buffer.concat([scan.after, Buffer.of(0)]);
    for (const { key, value } of entities.getRange({ start, end: Buffer.of(BALANCE_KEY_PREFIX + 1) })) {
      const row = rowOf(key, value, scan.finalizedNumber);
      if (inBounds(row.meta, scan.fromBlock, scan.toBlock)) yield row;
    }
  },
  bounds(entities: BinaryTable) {
    let bounds: { fromBlock: number; toBlock: number } | null = null;
    for (const { value } of entities.getRange({ start: Buffer.of(BALANCE_KEY_PREFIX), end: Buffer.of(BALANCE_KEY_PREFIX + 1) })) {
      const n = rowMeta(value, null).lastChange.blockNumber;
      bounds = bounds === null ? { fromBlock: n, toBlock: n } : { fromBlock: Math.min(bounds.fromBlock, n), toBlock: Math.max(bounds.toBlock, n) };
    }
    return bounds;
  },
};
