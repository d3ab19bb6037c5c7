/**
 * Fork digests (consensus-specs phase0 `compute_fork_digest`, modified in Fulu by EIP-7892 for blob-parameter-only
 * forks) and the ENR `eth2` field (`ENRForkID`). The digest names the network and fork on every topic, req/resp
 * context and node record: from Fulu on it is the fork data root XORed with the hash of the blob parameters in force,
 * so each BPO fork has its own digest although the fork version stays.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { ContainerType, ByteVectorType, UintNumberType } from '@chainsafe/ssz';
import { epochAtSlot, forkAtEpoch, type BeaconChainConfig, type ForkName } from '../config.js';
import { ForkData } from '../ssz.js';

/** A blob-parameters entry (`BLOB_SCHEDULE`), from the epoch it takes effect. */
export interface BlobParameters {
  readonly epoch: number;
  readonly maxBlobsPerBlock: number;
}

export interface BlobSchedule {
  /** `MAX_BLOBS_PER_BLOCK_ELECTRA`: in force before the first entry. */
  readonly electraMaxBlobsPerBlock: number;
  readonly entries: readonly BlobParameters[];
}

/** Mainnet's (consensus-specs `configs/mainnet.yaml`): BPO1 at epoch 412672 (15 blobs), BPO2 at 419072 (21). */
export const MAINNET_BLOB_SCHEDULE: BlobSchedule = { electraMaxBlobsPerBlock: 9, entries: [{ epoch: 412672, maxBlobsPerBlock: 15 }, { epoch: 419072, maxBlobsPerBlock: 21 }] };
/** A chain without blob-parameter-only forks (the devnet's beacon chain, which does not schedule Fulu). */
export const NO_BLOB_SCHEDULE: BlobSchedule = { electraMaxBlobsPerBlock: 9, entries: [] };

const FAR_FUTURE_EPOCH = Infinity;

function uint64le(value: number): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(value), true);
  return out;
}

/** `get_blob_parameters(epoch)`. */
export function blobParametersAt(config: BeaconChainConfig, schedule: BlobSchedule, epoch: number): BlobParameters {
  const sorted = [...schedule.entries].sort((a, b) => b.epoch - a.epoch);
  for (const entry of sorted) if (epoch >= entry.epoch) return entry;
  const electra = config.forks.find((f) => f.name === 'electra');
  return { epoch: electra?.epoch ?? 0, maxBlobsPerBlock: schedule.electraMaxBlobsPerBlock };
}

/** `compute_fork_digest(genesis_validators_root, epoch)`, Fulu's. */
export function forkDigest(config: BeaconChainConfig, schedule: BlobSchedule, epoch: number): Uint8Array {
  const fork = forkAtEpoch(config, epoch);
  const base = ForkData.hashTreeRoot({ currentVersion: fork.version, genesisValidatorsRoot: config.genesisValidatorsRoot });
  const fulu = config.forks.find((f) => f.name === 'fulu');
  if (!fulu || epoch < fulu.epoch) return base.slice(0, 4);
  const blob = blobParametersAt(config, schedule, epoch);
  const mask = sha256(new Uint8Array([...uint64le(blob.epoch), ...uint64le(blob.maxBlobsPerBlock)]));
  return Uint8Array.from({ length: 4 }, (_, i) => base[i]! ^ mask[i]!);
}

/** Every epoch where the digest changes (fork activations and, from Fulu, blob schedule entries), ascending. */
export function digestEpochs(config: BeaconChainConfig, schedule: BlobSchedule): number[] {
  const epochs = new Set<number>();
  for (const f of config.forks) if (Number.isFinite(f.epoch)) epochs.add(f.epoch);
  const fulu = config.forks.find((f) => f.name === 'fulu');
  if (fulu && Number.isFinite(fulu.epoch)) for (const entry of schedule.entries) if (entry.epoch >= fulu.epoch) epochs.add(entry.epoch);
  return [...epochs].sort((a, b) => a - b);
}

/** Digest (hex without 0x) → the fork whose SSZ shapes its context uses, for every digest the chain has had or schedules. */
export function digestForks(config: BeaconChainConfig, schedule: BlobSchedule): Map<string, ForkName> {
  const map = new Map<string, ForkName>();
  for (const epoch of digestEpochs(config, schedule)) map.set(Buffer.from(forkDigest(config, schedule, epoch)).toString('hex'), forkAtEpoch(config, epoch).name);
  return map;
}

/** The digest of the fork a slot belongs to (the context bytes of an object whose context epoch is that slot's). */
export function digestAtSlot(config: BeaconChainConfig, schedule: BlobSchedule, slot: number): Uint8Array {
  return forkDigest(config, schedule, epochAtSlot(config, slot));
}

export const ENRForkID = new ContainerType({
  forkDigest: new ByteVectorType(4),
  nextForkVersion: new ByteVectorType(4),
  nextForkEpoch: new UintNumberType(8, { clipInfinity: true }),
});

/** The `eth2` ENR value at `epoch`: the digest, the next regular fork's version and the next digest change (a BPO fork too). */
export function enrForkId(config: BeaconChainConfig, schedule: BlobSchedule, epoch: number): Uint8Array {
  const current = forkAtEpoch(config, epoch);
  const nextRegular = config.forks.find((f) => f.epoch > epoch && Number.isFinite(f.epoch));
  const nextChange = digestEpochs(config, schedule).find((e) => e > epoch);
  return ENRForkID.serialize({
    forkDigest: forkDigest(config, schedule, epoch),
    nextForkVersion: nextRegular?.version ?? current.version,
    nextForkEpoch: nextChange ?? FAR_FUTURE_EPOCH,
  });
}

/** The digest an `eth2` ENR value announces (null when it is not an ENRForkID). */
export function digestOfEnrForkId(value: Uint8Array): Uint8Array | null {
  return value.length === 16 ? value.slice(0, 4) : null;
}
