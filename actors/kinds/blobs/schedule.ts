/**
 * BlobSchedule rows: one per fork that sets blob parameters (Cancun, Prague, Osaka, BPO forks), in activation order.
 *
 * Blob forks activate by timestamp, so the schedule alone does not say which block was the first of a fork. A row's
 * `activationBlock` is 0 when the fork is active from genesis, else what `resolveActivationBlock` answers (for
 * example a lookup of the first stored header at or after the timestamp), else null: a future fork, or a past one the
 * node has not resolved. The processor fills a null when it first sees a block of that fork (`scheduleActivationsAt`)
 * and then emits `blobs.schedule.put` with the filled row.
 */
import { listBlobSchedule, type BlockPosition, type ForkIdGenesis, type ForkSchedule } from '../sdk/chain.js';
import type { BlobSchedule, BlobScheduleSource } from './types.js';

/** The first block at or after a timestamp, or null when unknown. */
export type ActivationBlockResolver = (activationTimestamp: number) => number | null;

export function scheduleRows(
  schedule: ForkSchedule,
  genesis: ForkIdGenesis,
  source: BlobScheduleSource,
  resolveActivationBlock?: ActivationBlockResolver,
): BlobSchedule[] {
  return listBlobSchedule(schedule, genesis).map((entry) => ({
    name: entry.name,
    activationBlock: entry.activationTimestamp <= genesis.timestamp ? 0 : resolveActivationBlock?.(entry.activationTimestamp) ?? null,
    activationTimestamp: entry.activationTimestamp,
    forkId: entry.forkId,
    targetBlobsPerBlock: entry.target,
    maxBlobsPerBlock: entry.max,
    baseFeeUpdateFraction: entry.baseFeeUpdateFraction.toString(),
    eip7918: entry.eip7918,
    source,
  }));
}

/**
 * The rows whose fork this block activates (its parent's timestamp is before the activation, its own is at or after),
 * with `activationBlock` set to the block's number; usually none, several when forks share a block.
 */
export function scheduleActivationsAt(rows: readonly BlobSchedule[], block: BlockPosition, parentTimestamp: number): BlobSchedule[] {
  return rows
    .filter((row) => parentTimestamp < row.activationTimestamp && row.activationTimestamp <= block.timestamp)
    .map((row) => ({ ...row, activationBlock: block.number }));
}
