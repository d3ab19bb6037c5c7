/**
 * The blob schedule as the API reports it (spec §2.6 BlobSchedule): one entry per fork that sets blob parameters,
 * with its activation timestamp and the EIP-2124 fork id in force from that activation.
 */
import type { BlobParams } from './blob-fee.js';
import { forkId, type ForkIdGenesis } from './fork-id.js';
import { blobParamsAt, type ForkName, type ForkSchedule } from './fork-schedule.js';
import type { Hex } from './hex.js';

export interface BlobScheduleInfo extends BlobParams {
  name: ForkName;
  activationTimestamp: number;
  /** The 4-byte fork id hash from this activation on. */
  forkId: Hex;
}

export function listBlobSchedule(schedule: ForkSchedule, genesis: ForkIdGenesis): BlobScheduleInfo[] {
  const entries: BlobScheduleInfo[] = [];
  for (const fork of schedule.forks) {
    if (fork.blob === undefined || fork.timestamp === undefined) continue;
    // Timestamp forks follow every block fork, so the largest block number stands for "after all of them".
    const at = { number: Number.MAX_SAFE_INTEGER, timestamp: fork.timestamp };
    entries.push({ name: fork.name, activationTimestamp: fork.timestamp, forkId: forkId(schedule, genesis, at).hash, ...blobParamsAt(schedule, at)! });
  }
  return entries;
}
