/**
 * Automatic recovery checkpoints of ordered-state instances (spec §2.9, §3.5), written by the
 * processor lane inside its commit: when finality crosses a multiple of `checkpoint_every_blocks`,
 * the private state as of the finalized block is copied — the current rows with the recorded
 * inverses of every later (unfinalized) block applied in reverse — and all but the newest
 * `checkpoints_retained` are dropped. A restore repairs the state from the current (newest)
 * checkpoint and brings it to the exact reduce cursor, atomically, and refuses any older one
 * (spec §3.5, §7.2 rule 7).
 */
import { CodedError } from '../../runtime/errors.js';
import { decodeHeader } from '../../net/eth/header.js';
import { hexToBytes, type Hex } from '../../net/eth/hex.js';
import { getHeaderBytes } from '../../store/chain-material.js';
import { checkpointDigest, checkpointId, getCheckpoint, listCheckpoints, parseCheckpointId, putCheckpoint, pruneCheckpoints, type CheckpointRecord } from '../../store/checkpoints.js';
import { readProgress, readRanges, type Finality } from '../../store/coverage.js';
import type { ProcessorTables, Store } from '../../store/store.js';
import { stateAsOf } from '../kinds/sdk/state.js';
import { readBlockInput } from './block-input.js';
import type { CommitContext } from './commit.js';
import type { BlockRef } from '../../store/chain-types.js';

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
  /** The covered blocks after the checkpoint re-reduced from the store's retained material (null: none). */
  readonly replayed: { readonly fromBlock: number; readonly toBlock: number; readonly blocks: number } | null;
  /** The reduce cursor the repaired state reflects: the instance's, unchanged. */
  readonly reduceCursor: BlockRef;
}

/** What a restore reads and re-runs: the lane's commit context. */
export type RestoreContext = Pick<CommitContext, 'store' | 'tables' | 'kind' | 'needs' | 'kindContext'>;

function conflict(message: string, details: Record<string, unknown>): CodedError {
  return new CodedError('conflict', message, details);
}

/** The hashes of the instance's branch from `from` (exclusive) up to the cursor, by number, walking parent links of recorded headers. */
function branchAfter(store: Store, from: BlockRef, cursor: BlockRef, checkpoint: string): Map<number, Hex> {
  const hashes = new Map<number, Hex>();
  let hash: Hex = cursor.hash;
  for (let n = cursor.number; n > from.number; n -= 1) {
    hashes.set(n, hash);
    const bytes = getHeaderBytes(store, hexToBytes(hash));
    if (!bytes) throw conflict(`checkpoint ${checkpoint} cannot be brought to the reduce cursor: block ${n} (${hash}) is no longer retained by the store`, { checkpoint, missingBlock: { number: n, hash } });
    hash = decodeHeader(bytes).parentHash;
  }
  if (hash !== from.hash) throw conflict(`checkpoint ${checkpoint} (block ${from.number}, ${from.hash}) is not an ancestor of the reduce cursor`, { checkpoint, reduceCursor: cursor });
  return hashes;
}

/**
 * Repairs the private state from a checkpoint, atomically (spec §3.5): the instance's current
 * checkpoint is the newest retained one — older checkpoints are rejected (409 `conflict`, §7.2 rule 7).
 * Its rows replace the state and the covered blocks from it to the exact current reduce cursor are
 * re-reduced from the store's retained material in the same transaction (finalized blocks as
 * finalized, later ones recording their inverses so a reorg still undoes them), so the state lands
 * at the same cursor it was at, equal to processing those blocks from scratch. Nothing is published:
 * the change log already carries every change.
 */
export function restoreCheckpoint(ctx: RestoreContext, id: string): Promise<RestoreResult> {
  const { store, tables } = ctx;
  return store.write(() => {
    const blockNumber = parseCheckpointId(id);
    const record = blockNumber === null ? undefined : getCheckpoint(tables.checkpoints, blockNumber);
    if (!record) throw new CodedError('not_found', `no checkpoint '${id}' is retained for this processor`, { checkpoint: id });
    const newest = listCheckpoints(tables.checkpoints)[0]!;
    if (newest.blockNumber !== record.blockNumber) {
      throw conflict(`checkpoint ${id} (block ${record.blockNumber}) is older than the processor's current checkpoint ${newest.checkpoint} (block ${newest.blockNumber}); only the current checkpoint can be restored`, {
        checkpoint: id, checkpointBlock: { number: record.blockNumber, hash: record.blockHash }, currentCheckpoint: newest.checkpoint,
      });
    }
    const progress = readProgress(tables.state);
    const cursor = progress.reduceCursor;
    if (cursor === null || cursor.number < record.blockNumber) {
      throw conflict(`checkpoint ${id} (block ${record.blockNumber}) is ahead of the processor's reduce cursor (${cursor ? `block ${cursor.number}` : 'none'})`, { checkpoint: id, reduceCursor: cursor });
    }
    if (checkpointDigest(record.rows) !== record.digest) throw new CodedError('internal', `checkpoint ${id} does not match its digest; it was not restored`, { checkpoint: id });
    const branch = branchAfter(store, { number: record.blockNumber, hash: record.blockHash }, cursor, id);
    const ranges = readRanges(tables.coverage);
    for (const key of [...tables.entities.getKeys({})]) tables.entities.remove(key);
    for (const key of [...tables.undo.getKeys({})]) tables.undo.remove(key);
    for (const [key, value] of record.rows) tables.entities.put(Buffer.from(key), Buffer.from(value));
    let first: number | null = null;
    let last = 0;
    let blocks = 0;
    for (let n = record.blockNumber + 1; n <= cursor.number; n += 1) {
      // A block the instance never covered (below its start) was never reduced into the state.
      if (!ranges.some((r) => r.from <= n && n <= r.to)) continue;
      const hash = branch.get(n)!;
      let input;
      try {
        input = readBlockInput(store, n, hash, ctx.needs, ctx.kind.logInterest);
      } catch (error) {
        throw conflict(`checkpoint ${id} cannot be brought to the reduce cursor: ${(error as Error).message}`, { checkpoint: id, missingBlock: { number: n, hash } });
      }
      const finality: Finality = progress.finalizedNumber !== null && n <= progress.finalizedNumber ? 'finalized' : 'included';
      ctx.kind.apply(ctx.kindContext, input, finality);
      first ??= n;
      last = n;
      blocks += 1;
    }
    const replayed = first === null ? null : { fromBlock: first, toBlock: last, blocks };
    return {
      checkpoint: checkpointId(record.blockNumber), blockNumber: record.blockNumber, blockHash: record.blockHash, rowCount: record.rowCount, digest: record.digest, replayed, reduceCursor: cursor,
    };
  });
}
