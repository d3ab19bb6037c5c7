/**
 * The blob-fee processor as a processor kind: rows from the pure transform, stored as rendered
 * JSON; an undo returns the previous block and its transactions as stored; finality re-renders
 * block rows; schedule rows are written once and completed when a fork's first block is seen.
 */
import { hexToBytes } from '../sdk/chain.js';
import type { BlockInput, KindChange, KindContext } from '../sdk/kind.js';
import { defineProcessorKind } from '../sdk/define.js';
import { BLOBS_QUERY } from './query/extension.js';
import type { Finality } from '../sdk/tables.js';
import { BLOBS_COLLECTIONS } from './collections.js';
import { blockEntries } from './entries.js';
import { blockKey, blockTxIndexPrefix, scheduleKey, SCHEDULE_KEY_PREFIX, txKey } from './keys.js';
import { renderChangePayload, renderScheduleRow } from './render.js';
import { scheduleActivationsAt, scheduleRows } from './schedule.js';
import { BLOBS_PROCESSOR, BLOBS_SCHEMA } from './schema.js';
import { transformBlock, type TransformedBlock } from './transform.js';
import { withFinality } from './with-finality.js';
import type { BlobSchedule } from './types.js';

const SCHEDULE_PREFIX = Buffer.from([SCHEDULE_KEY_PREFIX]);

function storedSchedule(ctx: KindContext): BlobSchedule[] {
  const rows: BlobSchedule[] = [];
  for (const { key, value } of ctx.tables.entities.getRange({ start: SCHEDULE_PREFIX })) {
    if (key[0] !== SCHEDULE_KEY_PREFIX) break;
    rows.push(JSON.parse(value.toString('utf8')) as BlobSchedule);
  }
  return rows;
}

/** The blob processor's map output: the transformed block (marked finalized; applying re-marks it) and what the schedule rows read. */
export interface BlobsDeltas {
  readonly transformed: TransformedBlock;
  readonly timestamp: number;
  readonly parentTimestamp: number | null;
}

function scheduleChanges(ctx: KindContext, block: { number: number; timestamp: number; parentTimestamp: number | null }): KindChange[] {
  let rows = storedSchedule(ctx);
  const changed: BlobSchedule[] = [];
  if (rows.length === 0) {
    rows = scheduleRows(ctx.schedule, ctx.genesis, ctx.scheduleSource ?? 'chain_spec');
    changed.push(...rows);
  }
  if (block.parentTimestamp !== null) {
    for (const activated of scheduleActivationsAt(rows, block, block.parentTimestamp)) {
      const index = changed.findIndex((row) => row.name === activated.name);
      if (index >= 0) changed[index] = activated;
      else changed.push(activated);
    }
  }
  return changed.map((row) => {
    const rendered = renderScheduleRow(row);
    const key = scheduleKey(row.activationTimestamp, row.name);
    ctx.tables.entities.put(key, rendered);
    return { kind: 'blobs.schedule.put', key: key.toString('hex'), dataJson: rendered.toString('utf8') };
  });
}

export const blobsKind = defineProcessorKind({
  name: BLOBS_PROCESSOR.kind,
  version: BLOBS_PROCESSOR.version,
  sdk: '^1.0.0',
  ordering: 'block_local',
  // The transform reads the blob transactions and each receipt's cumulativeGasUsed only (transform.ts).
  needs: { bodies: true, receipts: true, partial: { blobTransactionsOnly: true, receiptGasOnly: true } },
  changeSchema: BLOBS_PROCESSOR.changeSchema,
  deliveryOrdering: BLOBS_PROCESSOR.deliveryOrdering,
  schema: BLOBS_SCHEMA,
  collections: BLOBS_COLLECTIONS,
  queryExtensions: [BLOBS_QUERY],
  finalizedKind: 'blobs.block.put',

  // Pure: the block, the chain's network name and fork schedule (no rows, no state).
  map(block: BlockInput, _options, chain): BlobsDeltas {
    const transformed = transformBlock({
      network: chain.network, schedule: chain.schedule, header: block.header, transactions: block.transactions, receipts: block.receipts,
      blockSizeBytes: block.sizeBytes, finality: 'finalized', blockHash: block.hash,
    });
    return { transformed, timestamp: block.header.timestamp, parentTimestamp: block.parentTimestamp };
  },

  applyMapped(ctx, deltas: BlobsDeltas, block, finality) {
    // map marks the block finalized; the rows carry the finality it is applied at (finality is the block's last field).
    const transformed: TransformedBlock = finality === 'finalized' ? deltas.transformed : { ...deltas.transformed, block: { ...deltas.transformed.block, finality } };
    for (const entry of blockEntries(transformed)) ctx.tables.entities.put(entry.key, entry.value);
    return [
      ...scheduleChanges(ctx, { number: block.number, timestamp: deltas.timestamp, parentTimestamp: deltas.parentTimestamp }),
      { kind: 'blobs.block.put', key: blockKey(block.number).toString('hex'), dataJson: renderChangePayload(transformed) },
    ];
  },

  undo(ctx, number, hash) {
    const key = blockKey(number);
    const row = ctx.tables.entities.getBinary(key);
    if (!row) return [];
    const stored = JSON.parse(row.toString('utf8')) as { blockHash: string };
    if (stored.blockHash !== hash) throw new Error(`undo of block ${number} (${hash}) but the stored row is ${stored.blockHash}`);
    const transactions: Buffer[] = [];
    const prefix = blockTxIndexPrefix(number);
    for (const { key: indexKey, value: txHash } of ctx.tables.entities.getRange({ start: prefix })) {
      if (!indexKey.subarray(0, prefix.length).equals(prefix)) break;
      const txRowKey = txKey(hexToBytes(`0x${txHash.toString('hex')}`));
      const txRow = ctx.tables.entities.getBinary(txRowKey);
      if (txRow) transactions.push(Buffer.from(txRow));
      ctx.tables.entities.remove(txRowKey);
      ctx.tables.entities.remove(indexKey);
    }
    ctx.tables.entities.remove(key);
    const dataJson = `{"block":${row.toString('utf8')},"transactions":[${transactions.map((t) => t.toString('utf8')).join(',')}]}`;
    return [{ kind: 'blobs.block.delete', key: key.toString('hex'), dataJson }];
  },

  finalize(ctx, from, to) {
    const finalized: Finality = 'finalized';
    for (const { key, value } of ctx.tables.entities.getRange({ start: blockKey(from), end: blockKey(to + 1) })) {
      ctx.tables.entities.put(key, withFinality(value, finalized));
    }
  },
});
