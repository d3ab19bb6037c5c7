/**
 * The blob processor's collections for the generic entity API (spec §2.7): `blocks`, `transactions`
 * and `schedule`, each a slice of the entity table (layout in keys.ts). Scans walk keys in block order:
 * blocks by their key, transactions through the per-block index, schedule rows by activation.
 */
import { u64Key as u64, type BinaryTable, type CollectionDescription, type CollectionRow, type CollectionRowMeta, type CollectionScan } from '../sdk/tables.js';
import { blockRowFields } from './block-row-fields.js';
import { BLOCK_KEY_PREFIX, BLOCK_TRANSACTION_INDEX_KEY_PREFIX, blockKey, SCHEDULE_KEY_PREFIX, TRANSACTION_KEY_PREFIX, txKey } from './keys.js';
import { BLOBS_PROCESSOR } from './schema.js';

const NO_BLOCK: CollectionRowMeta = { blockNumber: null, blockHash: null, timestamp: null, finality: null };
const MAX_BLOCK = Number.MAX_SAFE_INTEGER;

/** A block row's metadata, read from its bytes (block-row-fields.ts). */
const blockMeta: (row: Buffer) => CollectionRowMeta = blockRowFields;

/** Metadata of a block from its stored row; a block without a row (not retained) has none. */
function metaOfBlock(entities: BinaryTable, blockNumber: number): CollectionRowMeta {
  const row = entities.get(blockKey(blockNumber));
  return row ? blockMeta(row) : { ...NO_BLOCK, blockNumber };
}

/** Keys `prefix ‖ …` resumed strictly after `after` (a trailing zero byte is the next key in byte order). */
function startAfter(after: Buffer | null, from: Buffer): Buffer {
  if (after === null || Buffer.compare(after, from) < 0) return from;
  return Buffer.concat([after, Buffer.of(0)]);
}

function blockBounds(scan: CollectionScan): { from: number; to: number } {
  return { from: scan.fromBlock ?? 0, to: scan.toBlock ?? MAX_BLOCK };
}

const schemaLabel = (entity: string) => `${BLOBS_PROCESSOR.changeSchema}/${entity}`;

const blocks: CollectionDescription = {
  name: 'blocks',
  description: 'One BlobsBlock per covered block, by block number.',
  schema: schemaLabel('BlobsBlock'),
  owns: (key) => key.length === 9 && key[0] === BLOCK_KEY_PREFIX,
  get(entities, key) {
    const value = entities.get(key);
    return value ? { key, value, position: key, meta: blockMeta(value) } : undefined;
  },
  *scan(entities, scan) {
    const { from, to } = blockBounds(scan);
    const end = Buffer.concat([blockKey(to), Buffer.of(0)]);
    for (const { key, value } of entities.getRange({ start: startAfter(scan.after, blockKey(from)), end })) {
      yield { key, value, position: key, meta: blockMeta(value) };
    }
  },
  bounds: (entities) => keyedBounds(entities, Buffer.of(BLOCK_KEY_PREFIX)),
};

const transactions: CollectionDescription = {
  name: 'transactions',
  description: 'One BlobTransaction per type-3 transaction, in block and canonical transaction-index order; keyed by transaction hash.',
  schema: schemaLabel('BlobTransaction'),
  owns: (key) => key.length === 33 && key[0] === TRANSACTION_KEY_PREFIX,
  get(entities, key) {
    const value = entities.get(key);
    if (!value) return undefined;
    const { blockNumber } = JSON.parse(value.toString('utf8')) as { blockNumber: number };
    return { key, value, position: key, meta: metaOfBlock(entities, blockNumber) };
  },
  *scan(entities, scan) {
    const { from, to } = blockBounds(scan);
    const indexStart = Buffer.concat([Buffer.of(BLOCK_TRANSACTION_INDEX_KEY_PREFIX), u64(from)]);
    const indexEnd = Buffer.concat([Buffer.of(BLOCK_TRANSACTION_INDEX_KEY_PREFIX), u64(to), Buffer.alloc(5, 0xff)]);
    let cached = { number: -1, meta: NO_BLOCK };
    for (const { key: position, value: hash } of entities.getRange({ start: startAfter(scan.after, indexStart), end: indexEnd })) {
      const key = txKey(hash);
      const value = entities.get(key);
      const number = Number(position.readBigUInt64BE(1));
      if (!value) throw new Error(`blob transaction 0x${Buffer.from(hash).toString('hex')} of block ${number} is indexed but has no row`);
      if (cached.number !== number) cached = { number, meta: metaOfBlock(entities, number) };
      yield { key, value, position, meta: cached.meta };
    }
  },
  bounds: (entities) => keyedBounds(entities, Buffer.of(BLOCK_TRANSACTION_INDEX_KEY_PREFIX)),
};

const schedule: CollectionDescription = {
  name: 'schedule',
  description: 'One BlobSchedule per blob fork, in activation order; block metadata once its first block is seen.',
  schema: schemaLabel('BlobSchedule'),
  owns: (key) => key.length > 9 && key[0] === SCHEDULE_KEY_PREFIX,
  get(entities, key) {
    const value = entities.get(key);
    return value ? scheduleRow(entities, key, value) : undefined;
  },
  *scan(entities, scan) {
    const bounded = scan.fromBlock !== null || scan.toBlock !== null;
    const { from, to } = blockBounds(scan);
    const prefix = Buffer.of(SCHEDULE_KEY_PREFIX);
    for (const { key, value } of entities.getRange({ start: startAfter(scan.after, prefix), end: Buffer.of(SCHEDULE_KEY_PREFIX + 1) })) {
      const row = scheduleRow(entities, key, value);
      const number = row.meta.blockNumber;
      if (bounded && (number === null || number < from || number > to)) continue;
      yield row;
    }
  },
  bounds(entities) {
    const numbers = [...this.scan(entities, { fromBlock: 0, toBlock: null, after: null, finalizedNumber: null })].map((row) => row.meta.blockNumber!);
    return numbers.length === 0 ? null : { fromBlock: Math.min(...numbers), toBlock: Math.max(...numbers) };
  },
};

/** First and last block of keys `prefix ‖ u64 block ‖ …`. */
function keyedBounds(entities: BinaryTable, prefix: Buffer): { fromBlock: number; toBlock: number } | null {
  const end = Buffer.of(prefix[0]! + 1);
  const first = firstKey(entities.getKeys({ start: prefix, end, limit: 1 }));
  const last = firstKey(entities.getKeys({ start: end, end: prefix, reverse: true, limit: 1 }));
  if (!first || !last) return null;
  return { fromBlock: Number(first.readBigUInt64BE(1)), toBlock: Number(last.readBigUInt64BE(1)) };
}

function firstKey(keys: Iterable<Buffer>): Buffer | undefined {
  for (const key of keys) return key;
  return undefined;
}

function scheduleRow(entities: BinaryTable, key: Buffer, value: Buffer): CollectionRow {
  const { activationBlock, activationTimestamp } = JSON.parse(value.toString('utf8')) as { activationBlock: number | null; activationTimestamp: number };
  const meta = activationBlock === null ? { ...NO_BLOCK, timestamp: activationTimestamp } : { ...metaOfBlock(entities, activationBlock), timestamp: activationTimestamp };
  return { key, value, position: key, meta };
}

export const BLOBS_COLLECTIONS: readonly CollectionDescription[] = [blocks, transactions, schedule];
