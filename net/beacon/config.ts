/**
 * A beacon chain's light-client parameters: genesis validators root, the fork schedule (versions
 * and activation epochs) and the preset sizes the sync protocol depends on. Mainnet's values come
 * from consensus-specs `configs/mainnet.yaml` and the mainnet preset.
 */
import { hexToBytes } from '../eth/hex.js';

export type ForkName = 'phase0' | 'altair' | 'bellatrix' | 'capella' | 'deneb' | 'electra' | 'fulu';

export const FORK_ORDER: readonly ForkName[] = ['phase0', 'altair', 'bellatrix', 'capella', 'deneb', 'electra', 'fulu'];

export interface ForkEntry {
  readonly name: ForkName;
  readonly version: Uint8Array;
  /** Activation epoch; `Infinity` when not scheduled. */
  readonly epoch: number;
}

export interface BeaconChainConfig {
  readonly name: string;
  readonly genesisTime: number;
  readonly genesisValidatorsRoot: Uint8Array;
  readonly secondsPerSlot: number;
  readonly slotsPerEpoch: number;
  readonly epochsPerSyncCommitteePeriod: number;
  readonly syncCommitteeSize: number;
  /** Ascending by epoch, phase0 first. */
  readonly forks: readonly ForkEntry[];
}

const fork = (name: ForkName, version: string, epoch: number): ForkEntry => ({ name, version: hexToBytes(version, 4), epoch });

export const MAINNET: BeaconChainConfig = {
  name: 'mainnet',
  genesisTime: 1606824023,
  genesisValidatorsRoot: hexToBytes('0x4b363db94e286120d76eb905340fdd4e54bfe9f06bf33ff6cf5ad27f511bfe95', 32),
  secondsPerSlot: 12,
  slotsPerEpoch: 32,
  epochsPerSyncCommitteePeriod: 256,
  syncCommitteeSize: 512,
  forks: [
    fork('phase0', '0x00000000', 0),
    fork('altair', '0x01000000', 74240),
    fork('bellatrix', '0x02000000', 144896),
    fork('capella', '0x03000000', 194048),
    fork('deneb', '0x04000000', 269568),
    fork('electra', '0x05000000', 364032),
    fork('fulu', '0x06000000', 411392),
  ],
};

export function epochAtSlot(config: BeaconChainConfig, slot: number): number {
  return Math.floor(slot / config.slotsPerEpoch);
}

export function periodAtSlot(config: BeaconChainConfig, slot: number): number {
  return Math.floor(epochAtSlot(config, slot) / config.epochsPerSyncCommitteePeriod);
}

/** The fork active at an epoch (the last one whose activation epoch is not after it). */
export function forkAtEpoch(config: BeaconChainConfig, epoch: number): ForkEntry {
  let active = config.forks[0]!;
  for (const entry of config.forks) if (entry.epoch <= epoch) active = entry;
  return active;
}

/** Whether `name` is active at `epoch` (it or a later fork). */
export function isForkActive(config: BeaconChainConfig, name: ForkName, epoch: number): boolean {
  const entry = config.forks.find((f) => f.name === name);
  return entry !== undefined && entry.epoch <= epoch;
}

/** The slot a local clock reads now, with the half-second clock disparity the p2p spec allows. */
export function currentSlot(config: BeaconChainConfig, nowMs: number): number {
  return Math.max(0, Math.floor((nowMs + 500 - config.genesisTime * 1000) / (config.secondsPerSlot * 1000)));
}

/** A chain config as plain data (hex strings, null for an unscheduled fork) to pass between workers. */
export interface BeaconChainConfigData {
  readonly name: string;
  readonly genesisTime: number;
  readonly genesisValidatorsRoot: string;
  readonly secondsPerSlot: number;
  readonly slotsPerEpoch: number;
  readonly epochsPerSyncCommitteePeriod: number;
  readonly syncCommitteeSize: number;
  readonly forks: ReadonlyArray<{ readonly name: ForkName; readonly version: string; readonly epoch: number | null }>;
}

const toHex = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString('hex')}`;

export function chainConfigToData(config: BeaconChainConfig): BeaconChainConfigData {
  return {
    ...config,
    genesisValidatorsRoot: toHex(config.genesisValidatorsRoot),
    forks: config.forks.map((f) => ({ name: f.name, version: toHex(f.version), epoch: Number.isFinite(f.epoch) ? f.epoch : null })),
  };
}

export function chainConfigFromData(data: BeaconChainConfigData): BeaconChainConfig {
  return {
    ...data,
    genesisValidatorsRoot: hexToBytes(data.genesisValidatorsRoot, 32),
    forks: data.forks.map((f) => fork(f.name, f.version, f.epoch ?? Infinity)),
  };
}
