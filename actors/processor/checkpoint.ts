/**
 * Automatic recovery checkpoints of ordered-state instances (spec §2.9, §3.5), written by the
 * processor lane inside its commit: when finality crosses a multiple of `checkpoint_every_blocks`,
 * the private state as of the finalized block is copied — the current rows with the recorded
 * inverses of every later (unfinalized) block applied in reverse — and all but the newest
 * `checkpoints_retained` are dropped. A restore repairs the state from the checkpoint at the exact
 * reduce cursor, atomically, and refuses any other (spec §7.2 rule 7).
 */
import { CodedError } from '../../runtime/errors.js';
import { checkpointDigest, checkpointId, getCheckpoint, parseCheckpointId, putCheckpoint, pruneCheckpoints, type CheckpointRecord } from '../../store/checkpoints.js';
import { readProgress } from '../../store/coverage.js';
import type { ProcessorTables, Store } from '../../store/env.js';
import { u64Key } from '../../store/keys.js';
import { stateAsOf } from '../processors/sdk/state.js';

export interface CheckpointPolicy {
  /** 0: no checkpoints. */
  readonly everyBlocks: number;
  readonly retained: number;
}

/** True when finality moving from `previous` to `next` crosses a multiple of the interval. */
export function checkpointDue(policy: CheckpointPolicy, previous: number | null, next: number): boolean {
  if (policy.everyBlocks <= 0 || policy.retained <= 0) return false;
  return previous === null ? next >= policy.everyBlocks : Math.floor(next / policy.everyBlocks) > Math.floor(previous / policy.everyBlocks);
}

/** Inside the lane's write transaction, after the kind dropped the inverses of blocks up to `block`. */
export function takeCheckpoint(tables: ProcessorTables, policy: CheckpointPolicy, block: { number: number; hash: `0x${string}` }, changeSequence: bigint, remark?: (value: Buffer, through: number) => Buffer | null): void {
  // Values copied from inverses were recorded before this finality: they get its marks.
  const rows = stateAsOf(tables.entities, tables.undo, block.number, (value) => (remark ? remark(value, block.number) ?? value : value));
  const record: CheckpointRecord = {
    blockNumber: block.number, blockHash: block.hash, changeSequence: changeSequence.toString(), rowCount: rows.length, digest: checkpointDigest(rows), rows,
  };
  putCheckpoint(tables.checkpoints, record);
  pruneCheckpoints(tables.checkpoints, policy.retained);
}

export interface RestoreResult {
  readonly checkpoint: string;
  readonly blockNumber: number;
  readonly blockHash: string;
  readonly rowCount: number;
  readonly digest: string;
}

/** Replaces the private state with the checkpoint's rows in one transaction, only at the exact reduce cursor. */
export function restoreCheckpoint(store: Store, tables: ProcessorTables, id: string): Promise<RestoreResult> {
  return store.write(() => {
    const blockNumber = parseCheckpointId(id);
    const record = blockNumber === null ? undefined : getCheckpoint(tables.checkpoints, blockNumber);
    if (!record) throw new CodedError('not_found', `no checkpoint '${id}' is retained for this processor`, { checkpoint: id });
    const cursor = readProgress(tables.state).reduceCursor;
    if (cursor === null || cursor.number !== record.blockNumber || cursor.hash !== record.blockHash) {
      throw new CodedError('conflict', `checkpoint ${id} (block ${record.blockNumber}) is not at the processor's current reduce cursor (${cursor ? `block ${cursor.number}` : 'none'}); only the checkpoint at the exact current cursor can be restored`, {
        checkpoint: id, checkpointBlock: { number: record.blockNumber, hash: record.blockHash }, reduceCursor: cursor,
      });
    }
    if (checkpointDigest(record.rows) !== record.digest) throw new CodedError('internal', `checkpoint ${id} does not match its digest; it was not restored`, { checkpoint: id });
    const keys = [...tables.entities.getKeys({})];
    for (const key of keys) tables.entities.remove(key);
    for (const [key, value] of record.rows) tables.entities.put(Buffer.from(key), Buffer.from(value));
    // At the cursor no later block is applied, so no inverse can remain; drop any as a repair would.
    for (const key of [...tables.undo.getKeys({ start: u64Key(record.blockNumber + 1) })]) tables.undo.remove(key);
    return { checkpoint: checkpointId(record.blockNumber), blockNumber: record.blockNumber, blockHash: record.blockHash, rowCount: record.rowCount, digest: record.digest };
  });
}
