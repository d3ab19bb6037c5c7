/**
 * A temporary store populated directly, the way the chain and processor lanes write it: blob entity
 * rows, a change log of rendered envelopes with real cursors, coverage, progress and canonical heads.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../../../store/store.js';
import { encodeChangeValue, putChange, type ChangeOperation } from '../../../store/change-log.js';
import { coverBlock, readProgress, writeProgress, type ProcessorProgress } from '../../../store/coverage.js';
import { encodeCursor } from '../../../store/cursor.js';
import { u64Key } from '../../../store/keys.js';
import { renderEnvelope } from '../../../store/change-envelope.js';
import { blockKey, blockTxIndexKey, scheduleKey, txKey } from '../../../actors/kinds/blobs/keys.js';
import { renderBlock, renderChangePayload, renderScheduleRow, renderTransaction } from '../../../actors/kinds/blobs/render.js';
import type { BlobSchedule, BlobsBlock, BlobTransaction } from '../../../actors/kinds/blobs/types.js';

export const CHAIN_ID = 1337;

export interface TempStore {
  readonly dataDir: string;
  readonly store: Store;
}

/** A fresh writable store; the caller registers `closeTempStore` after stopping what reads it. */
export function createTempStore(prefix = 'cdn-api-'): TempStore {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  return { dataDir, store: openStore({ dataDir, chainId: CHAIN_ID }) };
}

export async function closeTempStore(temp: TempStore): Promise<void> {
  await temp.store.close();
  rmSync(temp.dataDir, { recursive: true, force: true });
}

export const hash32 = (seed: number, salt = 0): `0x${string}` => `0x${(seed * 7919 + salt * 104_729 + 1).toString(16).padStart(64, '0')}`;

export function blobsBlock(number: number, finality: BlobsBlock['finality'] = 'included'): BlobsBlock {
  return {
    network: 'devnet', blockNumber: number, blockHash: hash32(number), parentHash: hash32(number - 1), timestamp: 1_700_000_000 + number * 12,
    size: '1234', blobCount: 2, blobGasUsed: '262144', excessBlobGas: '0', blobBaseFee: '1', blobEthBurnedWei: '262144',
    executionBaseFee: '7', gasUsed: '21000', gasLimit: '30000000', executionEthBurnedWei: '147000', reserveFeeWei: '57344',
    transactionCount: 3, targetBlobsPerBlock: 6, maxBlobsPerBlock: 9, transformVersion: 1, finality,
  };
}

export function blobTransaction(blockNumber: number, salt: number): BlobTransaction {
  return {
    network: 'devnet', blockNumber, blockHash: hash32(blockNumber), txHash: hash32(blockNumber, salt), senderAddress: `0x${'ab'.repeat(20)}`,
    blobVersionedHashes: [hash32(blockNumber, salt + 100)], blobCount: 1, totalBurnedWei: '300', executionBurnedWei: '200', blobBurnedWei: '100',
  };
}

export function scheduleRow(name: string, activationBlock: number | null, activationTimestamp: number): BlobSchedule {
  return {
    name, activationBlock, activationTimestamp, forkId: '0x01020304', targetBlobsPerBlock: 6, maxBlobsPerBlock: 9,
    baseFeeUpdateFraction: '5007716', eip7918: name !== 'cancun', source: 'chain_spec',
  };
}

/** Writes block rows (with the given transactions, in index order), covers the blocks and records them canonical. */
export async function seedBlocks(store: Store, instance: string, blocks: ReadonlyArray<{ block: BlobsBlock; transactions?: readonly BlobTransaction[] }>): Promise<void> {
  const tables = store.processor(instance);
  await store.write(() => {
    for (const { block, transactions = [] } of blocks) {
      tables.entities.put(blockKey(block.blockNumber), renderBlock(block));
      transactions.forEach((tx, index) => {
        tables.entities.put(txKey(tx.txHash), renderTransaction(tx));
        tables.entities.put(blockTxIndexKey(block.blockNumber, index), Buffer.from(tx.txHash.slice(2), 'hex'));
      });
      coverBlock(tables, block.blockNumber);
      store.chain.canonical.put(u64Key(block.blockNumber), Buffer.from(block.blockHash.slice(2), 'hex'));
    }
  });
}

export async function seedSchedule(store: Store, instance: string, rows: readonly BlobSchedule[]): Promise<void> {
  const tables = store.processor(instance);
  await store.write(() => {
    for (const row of rows) tables.entities.put(scheduleKey(row.activationTimestamp, row.name), renderScheduleRow(row));
  });
}

export async function setProgress(store: Store, instance: string, progress: Partial<ProcessorProgress>): Promise<void> {
  const tables = store.processor(instance);
  await store.write(() => writeProgress(tables.state, { ...readProgress(tables.state), ...progress }));
}

export interface WrittenChange {
  readonly sequence: bigint;
  readonly operation: ChangeOperation;
  readonly cursor: string;
  readonly json: string;
}

const OPERATIONS: readonly ChangeOperation[] = ['apply', 'apply', 'undo', 'apply', 'finalized'];

/**
 * Appends `count` changes after the log's current head (sequence `from`), each a `blobs.block.put`
 * style envelope rendered as the processor lane renders it; `padding` grows each payload.
 */
export async function appendChanges(store: Store, instance: string, from: bigint, count: number, padding = 0): Promise<WrittenChange[]> {
  const tables = store.processor(instance);
  const written: WrittenChange[] = [];
  await store.write(() => {
    for (let i = 1; i <= count; i += 1) {
      const sequence = from + BigInt(i);
      const number = Number(sequence);
      const block = blobsBlock(number);
      const operation = OPERATIONS[number % OPERATIONS.length]!;
      const cursor = encodeCursor({ epoch: store.epoch, chainId: CHAIN_ID, instance, sequence, block: { number, hash: block.blockHash } });
      const payload = renderChangePayload({ block, transactions: [blobTransaction(number, 1)] });
      const dataJson = padding > 0 ? `${payload.slice(0, -1)},"padding":"${'x'.repeat(padding)}"}` : payload;
      const json = renderEnvelope({
        sequence, cursor, operation, chainId: CHAIN_ID, block: { number, hash: block.blockHash, parentHash: block.parentHash, timestamp: block.timestamp },
        finality: operation === 'finalized' ? 'finalized' : 'included', kind: 'blobs.block.put', schema: 'blobs.v1', key: String(number), dataJson, emittedAt: '2025-01-01T00:00:00.000Z',
      });
      putChange(tables.changes, sequence, encodeChangeValue(operation, cursor, json));
      written.push({ sequence, operation, cursor, json });
    }
    writeProgress(tables.state, { ...readProgress(tables.state), changeSequence: from + BigInt(count) });
  });
  return written;
}

/** Removes the oldest changes through `through` (what `db prune-changes` does). */
export async function pruneChanges(store: Store, instance: string, through: bigint): Promise<void> {
  const tables = store.processor(instance);
  await store.write(() => {
    for (let sequence = 1n; sequence <= through; sequence += 1n) tables.changes.remove(u64Key(sequence));
  });
}
