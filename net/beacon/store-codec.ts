/**
 * The light-client store as a record the finality lane can keep across restarts: SSZ bytes of its
 * headers and sync committees, with what it was derived from (the beacon chain's genesis
 * validators root and committee size, the weak-subjectivity checkpoint root). `restoreStore`
 * accepts a record only for the same chain and checkpoint, and re-checks what can be checked
 * without the network (each header's execution branch against its body root); anything else is a
 * `StoreRecordRejected` naming why, and the caller bootstraps again.
 *
 * `best_valid_update` is not kept: it only matters for a forced update after a long stall, and a
 * restarted client finds the period's updates again from its endpoints.
 */
import { bytesToHex, type Hex } from '../eth/hex.js';
import { epochAtSlot, type BeaconChainConfig } from './config.js';
import { BeaconBlockHeader, DenebExecutionPayloadHeader, syncCommitteeType, type SyncCommitteeValue } from './ssz.js';
import { assertValidHeader, type LightClientStore } from './sync-protocol.js';
import type { LightClientHeader } from './types.js';

export const STORE_RECORD_FORMAT = 1;

interface HeaderRecord {
  readonly beacon: Uint8Array;
  readonly execution: Uint8Array | null;
  /** The execution branch's nodes, 32 bytes each, concatenated. */
  readonly executionBranch: Uint8Array;
}

export interface StoreRecord {
  readonly format: number;
  readonly genesisValidatorsRoot: Hex;
  readonly syncCommitteeSize: number;
  readonly checkpointRoot: Hex;
  readonly finalizedHeader: HeaderRecord;
  readonly optimisticHeader: HeaderRecord;
  readonly currentSyncCommittee: Uint8Array;
  readonly nextSyncCommittee: Uint8Array | null;
  readonly previousMaxActiveParticipants: number;
  readonly currentMaxActiveParticipants: number;
  /** The finalized checkpoint epoch the store's finality proof gave (absent in records written before it was kept). */
  readonly finalizedEpoch?: number | null;
  /** ISO time of the write (for operators reading `db inspect`). */
  readonly savedAt: string;
}

export class StoreRecordRejected extends Error {
  override name = 'StoreRecordRejected';
}

function encodeHeader(header: LightClientHeader): HeaderRecord {
  const branch = new Uint8Array(header.executionBranch.length * 32);
  header.executionBranch.forEach((node, i) => branch.set(node, i * 32));
  return {
    beacon: BeaconBlockHeader.serialize(header.beacon),
    execution: header.execution ? DenebExecutionPayloadHeader.serialize(header.execution) : null,
    executionBranch: branch,
  };
}

function decodeHeader(record: HeaderRecord, what: string): LightClientHeader {
  const branchBytes = asBytes(record.executionBranch, `${what}.executionBranch`);
  if (branchBytes.length % 32 !== 0) throw new StoreRecordRejected(`${what}: the execution branch is not a list of 32-byte nodes`);
  const executionBranch = Array.from({ length: branchBytes.length / 32 }, (_, i) => branchBytes.slice(i * 32, (i + 1) * 32));
  return {
    beacon: BeaconBlockHeader.deserialize(asBytes(record.beacon, `${what}.beacon`)),
    execution: record.execution === null ? null : DenebExecutionPayloadHeader.deserialize(asBytes(record.execution, `${what}.execution`)),
    executionBranch,
  };
}

function asBytes(value: unknown, what: string): Uint8Array {
  if (!(value instanceof Uint8Array)) throw new StoreRecordRejected(`${what}: expected bytes`);
  return value;
}

export function encodeStore(config: BeaconChainConfig, checkpointRoot: Uint8Array, store: LightClientStore, now = new Date()): StoreRecord {
  const committee = syncCommitteeType(config.syncCommitteeSize);
  return {
    format: STORE_RECORD_FORMAT,
    genesisValidatorsRoot: bytesToHex(config.genesisValidatorsRoot),
    syncCommitteeSize: config.syncCommitteeSize,
    checkpointRoot: bytesToHex(checkpointRoot),
    finalizedHeader: encodeHeader(store.finalizedHeader),
    optimisticHeader: encodeHeader(store.optimisticHeader),
    currentSyncCommittee: committee.serialize(store.currentSyncCommittee),
    nextSyncCommittee: store.nextSyncCommittee ? committee.serialize(store.nextSyncCommittee) : null,
    previousMaxActiveParticipants: store.previousMaxActiveParticipants,
    currentMaxActiveParticipants: store.currentMaxActiveParticipants,
    finalizedEpoch: store.finalizedEpoch ?? null,
    savedAt: now.toISOString(),
  };
}

/** The store a record holds, for this chain and this checkpoint; StoreRecordRejected says why not. */
export function restoreStore(config: BeaconChainConfig, checkpointRoot: Uint8Array, value: unknown): LightClientStore {
  if (typeof value !== 'object' || value === null) throw new StoreRecordRejected('the record is not an object');
  const record = value as Partial<StoreRecord>;
  if (record.format !== STORE_RECORD_FORMAT) throw new StoreRecordRejected(`record format ${String(record.format)}, this build reads ${STORE_RECORD_FORMAT}`);
  const chainRoot = bytesToHex(config.genesisValidatorsRoot);
  if (record.genesisValidatorsRoot !== chainRoot || record.syncCommitteeSize !== config.syncCommitteeSize) {
    throw new StoreRecordRejected(`it is from another beacon chain (genesis validators root ${String(record.genesisValidatorsRoot)}, this chain's is ${chainRoot})`);
  }
  const checkpoint = bytesToHex(checkpointRoot);
  if (record.checkpointRoot !== checkpoint) {
    throw new StoreRecordRejected(`it was bootstrapped from checkpoint ${String(record.checkpointRoot)}, finality.checkpoint_root is now ${checkpoint}`);
  }
  let store: LightClientStore;
  try {
    const committee = syncCommitteeType(config.syncCommitteeSize);
    const finalizedHeader = decodeHeader(record.finalizedHeader as HeaderRecord, 'finalizedHeader');
    const optimisticHeader = decodeHeader(record.optimisticHeader as HeaderRecord, 'optimisticHeader');
    const currentSyncCommittee: SyncCommitteeValue = committee.deserialize(asBytes(record.currentSyncCommittee, 'currentSyncCommittee'));
    const nextSyncCommittee: SyncCommitteeValue | null = record.nextSyncCommittee == null ? null : committee.deserialize(asBytes(record.nextSyncCommittee, 'nextSyncCommittee'));
    const counts = [record.previousMaxActiveParticipants, record.currentMaxActiveParticipants];
    if (!counts.every((n) => Number.isSafeInteger(n) && n! >= 0)) throw new StoreRecordRejected('participant counts are not non-negative integers');
    store = {
      finalizedHeader, optimisticHeader, currentSyncCommittee, nextSyncCommittee, bestValidUpdate: null,
      previousMaxActiveParticipants: counts[0]!, currentMaxActiveParticipants: counts[1]!,
      finalizedEpoch: Number.isSafeInteger(record.finalizedEpoch) && record.finalizedEpoch! >= epochAtSlot(config, finalizedHeader.beacon.slot) ? record.finalizedEpoch! : null,
    };
  } catch (error) {
    if (error instanceof StoreRecordRejected) throw error;
    throw new StoreRecordRejected(`it does not decode: ${(error as Error).message}`);
  }
  try {
    assertValidHeader(config, store.finalizedHeader, 'stored finalized header');
    assertValidHeader(config, store.optimisticHeader, 'stored optimistic header');
  } catch (error) {
    throw new StoreRecordRejected((error as Error).message);
  }
  if (store.optimisticHeader.beacon.slot < store.finalizedHeader.beacon.slot) throw new StoreRecordRejected('its optimistic header is older than its finalized header');
  return store;
}

/** What a saved record depends on: a store whose key is unchanged need not be written again. */
export function storeStateKey(store: LightClientStore): string {
  return `${store.finalizedHeader.beacon.slot}:${store.nextSyncCommittee === null ? 0 : 1}`;
}
