/**
 * The devnet's beacon chain parameters, derived from its config: one beacon slot per execution
 * block (slot n carries block n), the minimal preset's sizes (8 slots per epoch, 8 epochs per
 * sync-committee period, 32 committee members) so signing and verification stay cheap, every
 * fork through Electra active from genesis, and devnet-only fork versions and genesis validators
 * root derived from the seed and chain id (so devnet signatures never verify on another chain).
 */
import { sha256 } from '@noble/hashes/sha2.js';
import type { BeaconChainConfig, ForkEntry, ForkName } from '../beacon/config.js';
import { secondsPerBlock, type DevnetConfig } from './config.js';

const DEVNET_FORKS: readonly ForkName[] = ['phase0', 'altair', 'bellatrix', 'capella', 'deneb', 'electra'];

export function devnetBeaconConfig(devnet: DevnetConfig): BeaconChainConfig {
  const forks: ForkEntry[] = DEVNET_FORKS.map((name, i) => ({ name, version: Uint8Array.of(i, 0, 0, 0x42), epoch: 0 }));
  return {
    name: 'devnet',
    genesisTime: devnet.genesisTimestamp,
    genesisValidatorsRoot: sha256(new TextEncoder().encode(`chain-data-node devnet beacon|${String(devnet.seed)}|${devnet.chainId}`)),
    secondsPerSlot: secondsPerBlock(devnet),
    slotsPerEpoch: 8,
    epochsPerSyncCommitteePeriod: 8,
    syncCommitteeSize: 32,
    forks: [...forks, { name: 'fulu', version: Uint8Array.of(6, 0, 0, 0x42), epoch: Infinity }],
  };
}
