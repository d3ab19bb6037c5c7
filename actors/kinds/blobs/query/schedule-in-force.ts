/**
 * Which BlobSchedule row is in force at a block. Blob forks activate by timestamp: with the block's
 * timestamp the answer is the last row activated at or before it. Without it, rows whose
 * `activationBlock` is known decide, unless a row that may activate before the block has none yet.
 */

interface ScheduleActivation {
  readonly activationBlock: number | null;
  readonly activationTimestamp: number;
}

/** The index of the row in force; null when no blob fork is in force; 'unknown' when it cannot be told. */
export function scheduleInForce(rows: readonly ScheduleActivation[], blockNumber: number, blockTimestamp: number | null): number | null | 'unknown' {
  if (blockTimestamp !== null) {
    const index = rows.findLastIndex((row) => row.activationTimestamp <= blockTimestamp);
    return index < 0 ? null : index;
  }
  const index = rows.findLastIndex((row) => row.activationBlock !== null && row.activationBlock <= blockNumber);
  for (const later of rows.slice(index + 1)) {
    // Rows are in activation order, so a later row activating after the block settles every row after it.
    if (later.activationBlock === null) return 'unknown';
    if (later.activationBlock > blockNumber) break;
  }
  return index < 0 ? null : index;
}
