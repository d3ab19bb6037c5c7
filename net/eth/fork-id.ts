/**
 * EIP-2124 fork identifiers: `hash` is CRC32 over the genesis hash and every passed fork activation (8-byte
 * big-endian block numbers, then timestamps); `next` is the next activation, or 0. Also the EIP's acceptance rule
 * for a remote peer's fork id.
 */
import { crc32 } from './crc32.js';
import type { BlockPosition, ForkSchedule } from './fork-schedule.js';
import { bytesToHex, hexToBytes, type Hash, type Hex } from './hex.js';

export interface ForkId {
  /** 4 bytes. */
  hash: Hex;
  /** Next activation block number or timestamp; 0 when none is scheduled. */
  next: number;
}

/** The genesis facts a fork id starts from. */
export interface ForkIdGenesis {
  hash: Hash;
  timestamp: number;
}

/** Fork id activations: distinct block numbers above 0 and timestamps above the genesis time, each ascending. */
export function forkIdActivations(schedule: ForkSchedule, genesisTimestamp: number): { blocks: number[]; timestamps: number[] } {
  const blocks = new Set<number>();
  const timestamps = new Set<number>();
  for (const fork of schedule.forks) {
    if (!fork.inForkId) continue;
    if (fork.block !== undefined && fork.block > 0) blocks.add(fork.block);
    if (fork.timestamp !== undefined && fork.timestamp > genesisTimestamp) timestamps.add(fork.timestamp);
  }
  const ascending = (a: number, b: number) => a - b;
  return { blocks: [...blocks].sort(ascending), timestamps: [...timestamps].sort(ascending) };
}

function uint64Bytes(value: number): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(value));
  return bytes;
}

function checksumHex(checksum: number): Hex {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, checksum);
  return bytesToHex(bytes);
}

/** Every (hash, activation) step: the checksum before each activation, then the final one with next 0 (never passed). */
function forkIdSteps(schedule: ForkSchedule, genesis: ForkIdGenesis): { hash: Hex; next: number; byTime: boolean }[] {
  const { blocks, timestamps } = forkIdActivations(schedule, genesis.timestamp);
  let checksum = crc32(hexToBytes(genesis.hash, 32));
  const steps: { hash: Hex; next: number; byTime: boolean }[] = [];
  for (const [activation, byTime] of [...blocks.map((b) => [b, false] as const), ...timestamps.map((t) => [t, true] as const)]) {
    steps.push({ hash: checksumHex(checksum), next: activation, byTime });
    checksum = crc32(uint64Bytes(activation), checksum);
  }
  steps.push({ hash: checksumHex(checksum), next: 0, byTime: true });
  return steps;
}

function passed(step: { next: number; byTime: boolean }, head: BlockPosition): boolean {
  return step.next !== 0 && (step.byTime ? head.timestamp >= step.next : head.number >= step.next);
}

/** The fork id a node at `head` announces. */
export function forkId(schedule: ForkSchedule, genesis: ForkIdGenesis, head: BlockPosition): ForkId {
  const { hash, next } = forkIdSteps(schedule, genesis).find((step) => !passed(step, head))!;
  return { hash, next };
}

/** geth's cut-off (mainnet genesis time): a `next` above it may be a timestamp rather than a block number. */
const TIMESTAMP_THRESHOLD = 1_438_269_973;

export type ForkIdCheck = { ok: true } | { ok: false; reason: 'remote_stale' | 'local_incompatible_or_stale' };

/**
 * EIP-2124 validation of a remote fork id against the local chain at `head`: accept when the remote is on the same
 * fork set (and we have not passed its announced next fork), a subset that announces our next fork, or a superset.
 */
export function checkForkId(schedule: ForkSchedule, genesis: ForkIdGenesis, head: BlockPosition, remote: ForkId): ForkIdCheck {
  const steps = forkIdSteps(schedule, genesis);
  const current = steps.findIndex((step) => !passed(step, head));
  const local = steps[current]!;
  const remoteHash = remote.hash.toLowerCase();
  if (remoteHash === local.hash) {
    if (remote.next === 0) return { ok: true };
    const remoteNextPassed = head.number >= remote.next || (remote.next > TIMESTAMP_THRESHOLD && head.timestamp >= remote.next);
    return remoteNextPassed ? { ok: false, reason: 'local_incompatible_or_stale' } : { ok: true };
  }
  for (let i = 0; i < current; i++) {
    if (steps[i]!.hash !== remoteHash) continue;
    return remote.next === steps[i]!.next ? { ok: true } : { ok: false, reason: 'remote_stale' };
  }
  for (let i = current + 1; i < steps.length; i++) {
    if (steps[i]!.hash === remoteHash) return { ok: true };
  }
  return { ok: false, reason: 'local_incompatible_or_stale' };
}
