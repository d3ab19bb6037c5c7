/**
 * Automatic recovery checkpoints of an ordered-state instance's private state (spec §2.9, §3.5):
 * `p.<instance>.checkpoints`, key u64 finalized block number → msgpack record holding the state's
 * rows as of that block and a SHA-256 digest over them. Written by the instance's own lane only;
 * the newest `checkpoints_retained` are kept.
 */
import { createHash } from 'node:crypto';
import type { BinaryKeyedRecordTable } from './store.js';
import { decodeU64KeyAsNumber, u64Key } from './keys.js';

export interface CheckpointRecord {
  readonly blockNumber: number;
  readonly blockHash: `0x${string}`;
  /** The instance's change sequence when it was taken (decimal). */
  readonly changeSequence: string;
  readonly rowCount: number;
  /** sha256 over every (key length, key, value length, value), hex. */
  readonly digest: string;
  readonly rows: ReadonlyArray<readonly [Uint8Array, Uint8Array]>;
}

export type CheckpointSummary = Omit<CheckpointRecord, 'rows'> & { readonly checkpoint: string };

export function checkpointDigest(rows: ReadonlyArray<readonly [Uint8Array, Uint8Array]>): string {
  const hash = createHash('sha256');
  const length = Buffer.alloc(4);
  for (const [key, value] of rows) {
    length.writeUInt32BE(key.length, 0);
    hash.update(length).update(key);
    length.writeUInt32BE(value.length, 0);
    hash.update(length).update(value);
  }
  return hash.digest('hex');
}

/** The id a checkpoint is named by in URLs: its block number in decimal. */
export function checkpointId(blockNumber: number): string {
  return String(blockNumber);
}

export function parseCheckpointId(id: string): number | null {
  return /^(0|[1-9][0-9]{0,15})$/.test(id) && Number.isSafeInteger(Number(id)) ? Number(id) : null;
}

export function putCheckpoint(table: BinaryKeyedRecordTable, record: CheckpointRecord): void {
  table.put(u64Key(record.blockNumber), record);
}

export function getCheckpoint(table: BinaryKeyedRecordTable, blockNumber: number): CheckpointRecord | undefined {
  return table.get(u64Key(blockNumber)) as CheckpointRecord | undefined;
}

export function listCheckpoints(table: BinaryKeyedRecordTable): CheckpointSummary[] {
  const list: CheckpointSummary[] = [];
  for (const { key, value } of table.getRange({ reverse: true })) {
    const { rows: _rows, ...summary } = value as CheckpointRecord;
    list.push({ checkpoint: checkpointId(decodeU64KeyAsNumber(key)), ...summary });
  }
  return list;
}

/** Removes all but the newest `retained` checkpoints. */
export function pruneCheckpoints(table: BinaryKeyedRecordTable, retained: number): void {
  const keys = [...table.getKeys({ reverse: true })];
  for (const key of keys.slice(retained)) table.remove(key);
}
