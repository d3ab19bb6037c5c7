/**
 * Reads of the blob processor's entity table (layout in actors/kinds/blobs/keys.ts), returning
 * the rendered JSON bytes exactly as stored.
 */
import type { BinaryTable } from '../../sdk/tables.js';
import { blockKey, blockNumberOfKey, blockTxIndexPrefix, SCHEDULE_KEY_PREFIX, txKey } from '../keys.js';

export interface BlockRow {
  readonly number: number;
  readonly json: Buffer;
}

/** Index keys are `prefix ‖ u32 index`; `prefix ‖ 0xff×5` sorts after every one of them. */
function pastIndexKeys(prefix: Buffer): Buffer {
  return Buffer.concat([prefix, Buffer.alloc(5, 0xff)]);
}

/** BlobsBlock rows of blocks in [fromBlock, toBlock], ascending, at most `limit`. */
export function blockRows(entities: BinaryTable, fromBlock: number, toBlock: number, limit: number): BlockRow[] {
  const rows: BlockRow[] = [];
  if (fromBlock > toBlock) return rows;
  const end = Buffer.concat([blockKey(toBlock), Buffer.of(0)]);
  for (const { key, value } of entities.getRange({ start: blockKey(fromBlock), end, limit })) rows.push({ number: blockNumberOfKey(key), json: value });
  return rows;
}

export function blockRow(entities: BinaryTable, blockNumber: number): Buffer | undefined {
  return entities.get(blockKey(blockNumber));
}

/** The block's BlobTransaction rows in canonical transaction-index order. */
export function blockTransactionRows(entities: BinaryTable, blockNumber: number): Buffer[] {
  const prefix = blockTxIndexPrefix(blockNumber);
  const rows: Buffer[] = [];
  for (const { value: hash } of entities.getRange({ start: prefix, end: pastIndexKeys(prefix) })) {
    const row = entities.get(txKey(hash));
    if (!row) throw new Error(`blob transaction 0x${Buffer.from(hash).toString('hex')} of block ${blockNumber} is indexed but has no row`);
    rows.push(row);
  }
  return rows;
}

export function transactionRow(entities: BinaryTable, txHash: string): Buffer | undefined {
  return entities.get(txKey(txHash));
}

/** Every BlobSchedule row in activation order. */
export function scheduleRows(entities: BinaryTable): Buffer[] {
  const rows: Buffer[] = [];
  for (const { value } of entities.getRange({ start: Buffer.of(SCHEDULE_KEY_PREFIX), end: Buffer.of(SCHEDULE_KEY_PREFIX + 1) })) rows.push(value);
  return rows;
}
