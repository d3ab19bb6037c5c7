/**
 * The devnet's fork schedule: every block fork through the merge at block 0, Shanghai at genesis, then Cancun,
 * Prague, Osaka and BPO1 at the configured offsets after genesis. Blob parameters of Cancun, Prague and Osaka are
 * mainnet's; BPO1's come from the config.
 */
import { createForkSchedule, MAINNET_SCHEDULE, type BlobScheduleEntry, type ForkActivation, type ForkName, type ForkSchedule } from '../eth/index.js';
import type { DevnetConfig } from './config.js';

const BLOCK_ZERO_FORKS: readonly ForkName[] = [
  'homestead', 'tangerineWhistle', 'spuriousDragon', 'byzantium', 'constantinople', 'petersburg', 'istanbul', 'berlin',
  'london', 'paris',
];

function mainnetBlob(name: ForkName): BlobScheduleEntry {
  const blob = MAINNET_SCHEDULE.forks.find((fork) => fork.name === name)?.blob;
  if (blob === undefined) throw new Error(`mainnet schedule has no blob parameters for ${name}`);
  return blob;
}

export function devnetForkSchedule(config: DevnetConfig): ForkSchedule {
  const at = (offset: number) => config.genesisTimestamp + offset;
  const forks: ForkActivation[] = BLOCK_ZERO_FORKS.map((name) => ({ name, block: 0, inForkId: true }));
  forks.push(
    { name: 'shanghai', timestamp: config.genesisTimestamp, inForkId: true },
    { name: 'cancun', timestamp: at(config.forks.cancun), inForkId: true, blob: mainnetBlob('cancun') },
    { name: 'prague', timestamp: at(config.forks.prague), inForkId: true, blob: mainnetBlob('prague') },
    { name: 'osaka', timestamp: at(config.forks.osaka), inForkId: true, blob: mainnetBlob('osaka') },
    { name: 'bpo1', timestamp: at(config.forks.bpo1), inForkId: true, blob: { ...config.bpo1Blob } },
  );
  return createForkSchedule(BigInt(config.chainId), forks);
}
