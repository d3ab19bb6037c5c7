/**
 * Fork schedules: which fork a block belongs to, by block number (up to the merge) or block timestamp (Shanghai on),
 * and which blob parameters apply. One shape serves mainnet, the devnet and any geth `genesis.json`.
 */
import type { BlobParams, BlobScheduleEntry } from './blob-fee.js';
import { GenesisFormatError } from './errors.js';

/** Forks in activation order (geth's names, `dao` for the DAO fork block). */
export const FORK_NAMES = [
  'frontier', 'homestead', 'dao', 'tangerineWhistle', 'spuriousDragon', 'byzantium', 'constantinople', 'petersburg',
  'istanbul', 'muirGlacier', 'berlin', 'london', 'arrowGlacier', 'grayGlacier', 'paris',
  'shanghai', 'cancun', 'prague', 'osaka', 'bpo1', 'bpo2', 'bpo3', 'bpo4', 'bpo5', 'amsterdam',
] as const;
export type ForkName = (typeof FORK_NAMES)[number];

/** One fork's activation: exactly one of `block` or `timestamp`. */
export interface ForkActivation {
  name: ForkName;
  block?: number;
  timestamp?: number;
  /** False when the activation is not a fork id entry (mainnet's merge, triggered by total difficulty). */
  inForkId: boolean;
  /** Blob parameters that take effect with this fork (Cancun, Prague, Osaka, BPO forks). */
  blob?: BlobScheduleEntry;
}

export interface ForkSchedule {
  chainId: bigint;
  /** Sorted by activation: block forks first, then timestamp forks. */
  forks: readonly ForkActivation[];
}

/** The position of a block on the chain: what fork activation is decided by. */
export interface BlockPosition {
  number: number;
  timestamp: number;
}

function isActive(fork: ForkActivation, at: BlockPosition): boolean {
  if (fork.block !== undefined) return at.number >= fork.block;
  return fork.timestamp !== undefined && at.timestamp >= fork.timestamp;
}

/** Checks order and shape once, so every lookup can trust the schedule. */
export function createForkSchedule(chainId: bigint, forks: readonly ForkActivation[]): ForkSchedule {
  let lastBlock = 0;
  let lastTimestamp = 0;
  let seenTimestamp = false;
  for (const fork of forks) {
    if ((fork.block === undefined) === (fork.timestamp === undefined)) {
      throw new GenesisFormatError(fork.name, 'a fork activates by exactly one of block or timestamp');
    }
    if (fork.block !== undefined) {
      if (seenTimestamp || fork.block < lastBlock) throw new GenesisFormatError(fork.name, `block ${fork.block} is out of order`);
      lastBlock = fork.block;
    } else {
      if (fork.timestamp! < lastTimestamp) throw new GenesisFormatError(fork.name, `timestamp ${fork.timestamp} is out of order`);
      lastTimestamp = fork.timestamp!;
      seenTimestamp = true;
    }
  }
  return { chainId, forks };
}

/** The latest fork active at a block (`frontier` when none is). */
export function forkAt(schedule: ForkSchedule, at: BlockPosition): ForkName {
  let current: ForkName = 'frontier';
  for (const fork of schedule.forks) if (isActive(fork, at)) current = fork.name;
  return current;
}

export function isForkActive(schedule: ForkSchedule, name: ForkName, at: BlockPosition): boolean {
  const fork = schedule.forks.find((f) => f.name === name);
  return fork !== undefined && isActive(fork, at);
}

/** Blob parameters for a block: the latest active fork's blob entry; undefined before Cancun. */
export function blobParamsAt(schedule: ForkSchedule, at: BlockPosition): BlobParams | undefined {
  let entry: BlobScheduleEntry | undefined;
  for (const fork of schedule.forks) if (fork.blob !== undefined && isActive(fork, at)) entry = fork.blob;
  if (entry === undefined) return undefined;
  return { ...entry, eip7918: isForkActive(schedule, 'osaka', at) };
}

/** Ethereum mainnet (chain id 1). The merge happened by total difficulty: its first proof-of-stake block is 15537394. */
export const MAINNET_SCHEDULE: ForkSchedule = createForkSchedule(1n, [
  { name: 'homestead', block: 1_150_000, inForkId: true },
  { name: 'dao', block: 1_920_000, inForkId: true },
  { name: 'tangerineWhistle', block: 2_463_000, inForkId: true },
  { name: 'spuriousDragon', block: 2_675_000, inForkId: true },
  { name: 'byzantium', block: 4_370_000, inForkId: true },
  { name: 'constantinople', block: 7_280_000, inForkId: true },
  { name: 'petersburg', block: 7_280_000, inForkId: true },
  { name: 'istanbul', block: 9_069_000, inForkId: true },
  { name: 'muirGlacier', block: 9_200_000, inForkId: true },
  { name: 'berlin', block: 12_244_000, inForkId: true },
  { name: 'london', block: 12_965_000, inForkId: true },
  { name: 'arrowGlacier', block: 13_773_000, inForkId: true },
  { name: 'grayGlacier', block: 15_050_000, inForkId: true },
  { name: 'paris', block: 15_537_394, inForkId: false },
  { name: 'shanghai', timestamp: 1_681_338_455, inForkId: true },
  { name: 'cancun', timestamp: 1_710_338_135, inForkId: true, blob: { target: 3, max: 6, baseFeeUpdateFraction: 3_338_477n } },
  { name: 'prague', timestamp: 1_746_612_311, inForkId: true, blob: { target: 6, max: 9, baseFeeUpdateFraction: 5_007_716n } },
  { name: 'osaka', timestamp: 1_764_798_551, inForkId: true, blob: { target: 6, max: 9, baseFeeUpdateFraction: 5_007_716n } },
  { name: 'bpo1', timestamp: 1_765_290_071, inForkId: true, blob: { target: 10, max: 15, baseFeeUpdateFraction: 8_346_193n } },
  { name: 'bpo2', timestamp: 1_767_747_671, inForkId: true, blob: { target: 14, max: 21, baseFeeUpdateFraction: 11_684_671n } },
]);

export const MAINNET_GENESIS_HASH = '0xd4e56740f876aef8c010b86a40d5f56745a118d0906a34e69aec8c0db1cb8fa3' as const;
export const MAINNET_GENESIS_TIMESTAMP = 0;
