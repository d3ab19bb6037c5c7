/**
 * A materialization job's chunk, committed by the processor lane (the one writer of its instance's tables): blocks
 * the history lane fetched from a history source, verified and recorded in the chain tables, applied through the
 * kind's own `apply` — exactly as a live block — in one write transaction with their change envelopes and coverage.
 *
 * Exactness: a block already covered is skipped inside the transaction (never processed twice, whoever covered it
 * first); a block above the instance's finalized block, or whose hash contradicts the canonical chain, fails the
 * chunk and nothing of it is committed (never phantom coverage).
 *
 * Ordered-state kinds reduce in chain order: their history is accepted only while the instance's cold backfill is
 * pending (its live lane holds, so nothing above has been reduced yet), and only as the next blocks after the reduce
 * cursor, each naming the previous one as its parent — a block out of order or off the chain fails the chunk.
 * When coverage holds every block of a pending cold backfill, the same transaction marks it completed.
 */
import { CodedError } from '../../runtime/errors.js';
import { bytesToHex, type Hex } from '../../net/eth/hex.js';
import { getCanonicalHash } from '../../store/chain-material.js';
import { coverBlock, rangeCovered, readProgress, readRanges, writeProgress, type ProcessorProgress } from '../../store/coverage.js';
import { StateBatch } from '../kinds/sdk/state.js';
import type { KindContext } from '../kinds/sdk/kind.js';
import { readBlockInput } from './block-input.js';
import type { CommitContext } from './commit.js';
import { ChangeGroupWriter } from './change-writer.js';
import { artifactTxn } from './artifacts.js';
import { INSTANCE_OWNER } from '../../store/artifacts.js';
import type { BlockRef } from '../../store/chain-types.js';

/** Rows and inverses an ordered-state chunk holds in memory before it writes them out mid-commit (as commit.ts). */
const BATCH_HELD_LIMIT = 100_000;

export type HistoryApplyMessage = {
  readonly type: 'history.apply';
  readonly job: string;
  /** Ascending, recorded and verified by the history lane. */
  readonly blocks: ReadonlyArray<BlockRef>;
};

export interface HistoryApplyResult {
  readonly applied: number;
  readonly skipped: number;
  readonly progress: ProcessorProgress;
  readonly changes: number;
  /** True when this chunk completed the instance's cold backfill. */
  readonly backfillCompleted: boolean;
}

/**
 * A history block must be at or below the instance's finalized block and, where the recorded chain has one at its
 * height, be that canonical block; otherwise the chunk fails (`why` names the rule of the caller).
 */
export function checkHistoryBlock(ctx: CommitContext, finalized: number | null, number: number, hash: Hex, why: string): void {
  if (finalized === null || number > finalized) {
    throw new CodedError('conflict', `block ${number} is above the finalized block ${finalized ?? 'none'} of instance '${ctx.instance}'; ${why}`);
  }
  const canonical = getCanonicalHash(ctx.store, number);
  if (canonical && bytesToHex(canonical) !== hash) {
    throw new CodedError('conflict', `block ${number} from the history source (${hash}) is not the canonical block ${bytesToHex(canonical)}`);
  }
}

export async function applyHistoryBlocks(ctx: CommitContext, message: HistoryApplyMessage, emittedAt: string): Promise<HistoryApplyResult> {
  const ordered = ctx.ordering === 'ordered_state';
  let applied = 0;
  let skipped = 0;
  let written = 0;
  let backfillCompleted = false;
  const progress = await ctx.store.write(() => {
    let current = readProgress(ctx.tables.state);
    if (ordered && (!current.coldBackfill || current.coldBackfill.completed)) {
      throw new CodedError('unsupported_capability', `processor instance '${ctx.instance}' has an ordered-state kind, which reduces in chain order: it takes history only through its cold backfill, below a live lane that waits for it`);
    }
    const batch = ordered ? new StateBatch(ctx.tables.entities, ctx.tables.undo) : null;
    const kindContext: KindContext = batch ? { ...ctx.kindContext, stateBatch: batch } : ctx.kindContext;
    let changeSequence = current.changeSequence;
    const finalized = current.finalizedNumber;
    const log = new ChangeGroupWriter({ changes: ctx.tables.changes, epoch: ctx.store.epoch, chainId: ctx.chainId, instance: ctx.instance });
    // A job's blocks keep their artifacts for the instance and for the job (released separately, spec §2.9).
    const artifacts = artifactTxn(ctx.tables.artifacts, ctx.artifacts);
    const owners = [INSTANCE_OWNER, { ownerKind: 'processor_job', ownerId: message.job } as const];
    for (const { number, hash } of message.blocks) {
      checkHistoryBlock(ctx, finalized, number, hash, 'a materialization job processes finalized blocks only');
      if (!ordered && readRanges(ctx.tables.coverage).some((r) => r.from <= number && number <= r.to)) {
        skipped += 1;
        continue;
      }
      const input = readBlockInput(ctx.store, number, hash, ctx.needs, ctx.kind.logInterest);
      if (ordered) {
        // Chain order: the next block after the reduce cursor (or the backfill's first block), linked to it.
        const cursor = current.reduceCursor;
        const expected = cursor === null ? current.coldBackfill!.fromBlock : cursor.number + 1;
        if (number !== expected) throw new CodedError('conflict', `block ${number} is out of chain order for ordered-state instance '${ctx.instance}' (its next block is ${expected})`);
        if (cursor !== null && input.header.parentHash !== cursor.hash) {
          throw new CodedError('conflict', `block ${number} (${hash}) names parent ${input.header.parentHash}, not block ${cursor.number} (${cursor.hash}) the instance's state reflects`);
        }
      }
      const block = { number, hash, parentHash: input.header.parentHash, timestamp: input.header.timestamp };
      const head = { operation: 'apply', block, finality: 'finalized', schema: ctx.changeSchema, emittedAt } as const;
      for (const change of artifacts.apply(ctx.kind, kindContext, input, 'finalized', finalized, owners)) {
        changeSequence += 1n;
        log.add(changeSequence, head, change);
        written += 1;
      }
      coverBlock(ctx.tables, number);
      applied += 1;
      if (ordered) current = { ...current, reduceCursor: { number, hash } };
      // Without a configured start, the instance's start is its lowest covered block.
      if (ctx.startBlock === null && (current.configuredStartBlock === null || number < current.configuredStartBlock)) current = { ...current, configuredStartBlock: number };
      if (batch !== null && batch.size >= BATCH_HELD_LIMIT) batch.flush();
    }
    log.flush();
    batch?.flush();
    const backfill = current.coldBackfill;
    if (backfill && !backfill.completed && rangeCovered(readRanges(ctx.tables.coverage), backfill.fromBlock, backfill.targetBlock)) {
      current = { ...current, coldBackfill: { ...backfill, completed: true } };
      backfillCompleted = true;
    }
    current = { ...current, changeSequence };
    writeProgress(ctx.tables.state, current);
    return current;
  });
  return { applied, skipped, progress, changes: written, backfillCompleted };
}
