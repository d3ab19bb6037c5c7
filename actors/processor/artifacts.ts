/**
 * Artifacts in the processor lane (spec §2.9, §7.2 rule 8): inside the lane's write transaction a block is applied
 * through the kind's map/apply split, and its `map` output is kept — a pending candidate while the block is only
 * included, a retained record owned by the instance once it is finalized — under `[budgets.artifacts]`.
 *
 * Admission: a write that takes the usage of every retaining instance over the budget throws ArtifactBudgetExceeded
 * inside the transaction, so the block's artifact, entity rows, changes, coverage and journal position roll back
 * together; the lane waits and retries (actor.ts) until pruning, a release or a larger budget makes room.
 */
import { CodedError } from '../../runtime/errors.js';
import type { BinaryTable } from '../../store/store.js';
import type { Finality } from '../../store/coverage.js';
import { dropPending, encodeArtifact, INSTANCE_OWNER, promotePending, pruneWindow, putPending, putRetained, readTotals, usageOf, type ArtifactOwner } from '../../store/artifacts.js';
import { encodeDeltas } from '../kinds/sdk/delta-codec.js';
import type { BlockInput, BoundKind, KindChange, KindContext } from '../kinds/sdk/kind.js';

export type ArtifactRetention = 'none' | 'window' | 'full';

/** `[processors.artifacts]` and `[budgets.artifacts]` as the lane uses them. */
export interface ArtifactPolicy {
  readonly retention: ArtifactRetention;
  /** retention = window: the newest this many finalized blocks keep the instance's claim. */
  readonly windowBlocks: number;
  /** Retained plus pending bytes across every retaining instance. */
  readonly maxBytes: number;
  /** Pending (included, not yet finalized) candidates across every retaining instance. */
  readonly maxPendingBlocks: number;
  /** The other instances that retain artifacts (their usage counts against the same budget). */
  readonly peers: readonly string[];
}

export const NO_ARTIFACTS: ArtifactPolicy = { retention: 'none', windowBlocks: 0, maxBytes: 0, maxPendingBlocks: 0, peers: [] };

/** Storing this block's artifact would exceed `[budgets.artifacts]`: the transaction that tried rolls back. */
export class ArtifactBudgetExceeded extends CodedError {
  constructor(readonly blockNumber: number, usage: { bytes: number; pending: number }, policy: ArtifactPolicy) {
    super('query_too_expensive', `the artifact of block ${blockNumber} would exceed [budgets.artifacts] (${usage.bytes} of max_bytes ${policy.maxBytes}, ${usage.pending} of max_pending_blocks ${policy.maxPendingBlocks} pending): nothing of the block is committed; processing resumes after pruning, an owner release (DELETE /admin/v1/processors/{processor}/artifacts) or a larger budget`, {
      blockNumber, usedBytes: String(usage.bytes), maxBytes: String(policy.maxBytes), pendingBlocks: usage.pending, maxPendingBlocks: policy.maxPendingBlocks,
    });
    this.name = 'ArtifactBudgetExceeded';
  }
}

/** The artifact bookkeeping of one write transaction of an instance (none configured: applies blocks as they are). */
export function artifactTxn(table: BinaryTable, artifacts: { readonly policy: ArtifactPolicy; readonly peers: readonly BinaryTable[] } | undefined): ArtifactTxn {
  return new ArtifactTxn(table, artifacts?.policy ?? NO_ARTIFACTS, artifacts?.peers ?? []);
}

/** One write transaction's artifact bookkeeping: the other instances' usage is read once (write transactions are serialized). */
export class ArtifactTxn {
  private readonly others: { bytes: number; pending: number };

  constructor(private readonly table: BinaryTable, private readonly policy: ArtifactPolicy, peers: readonly BinaryTable[]) {
    this.others = usageOf(peers);
  }

  get retaining(): boolean {
    return this.policy.retention !== 'none';
  }

  /** The lowest block the instance still claims once `finalized` is final (null: every block). */
  windowFloor(finalized: number): number | null {
    return this.policy.retention === 'window' ? finalized - this.policy.windowBlocks + 1 : null;
  }

  /**
   * Applies a block: through `apply` when no artifact is kept, else map → keep → applyMapped. `finalized` is the
   * instance's finalized block (a block at or below it is retained at once, unless already outside the window).
   */
  apply(kind: BoundKind, ctx: KindContext, input: BlockInput, finality: Finality, finalized: number | null, owners: readonly ArtifactOwner[] = [INSTANCE_OWNER]): KindChange[] {
    const split = kind.artifacts;
    if (!this.retaining || !split) return kind.apply(ctx, input, finality);
    const deltas = split.map(ctx, input);
    const block = { number: input.number, hash: input.hash, parentHash: input.header.parentHash, timestamp: input.header.timestamp };
    const record = encodeArtifact(block, encodeDeltas(deltas));
    if (finality === 'finalized') {
      // Below the window only the instance's claim lapses: a job's (or a subscription's) claim keeps the record.
      const floor = finalized === null ? null : this.windowFloor(finalized);
      const claimants = floor === null || input.number >= floor ? owners : owners.filter((owner) => owner.ownerKind !== INSTANCE_OWNER.ownerKind);
      if (claimants.length > 0) putRetained(this.table, input.number, record, claimants);
    } else {
      putPending(this.table, input.number, record);
    }
    this.admit(input.number);
    return split.applyMapped(ctx, deltas, block, finality);
  }

  undo(number: number): void {
    if (this.retaining) dropPending(this.table, number);
  }

  /** Blocks `from`..`to` became final: their candidates are retained, and the window drops the instance's older claims. */
  finalize(from: number, to: number): void {
    if (!this.retaining) return;
    const floor = this.windowFloor(to);
    promotePending(this.table, from, to, floor);
    if (floor !== null && floor > 0) pruneWindow(this.table, floor);
  }

  private admit(blockNumber: number): void {
    const own = readTotals(this.table);
    const usage = { bytes: this.others.bytes + own.retainedBytes + own.pendingBytes, pending: this.others.pending + own.pendingCount };
    if (usage.bytes > this.policy.maxBytes || usage.pending > this.policy.maxPendingBlocks) throw new ArtifactBudgetExceeded(blockNumber, usage, this.policy);
  }
}
