/**
 * The light-client sync protocol (consensus-specs `specs/{altair,capella,deneb,electra}/light-client/
 * sync-protocol.md`): store initialization from a bootstrap and a trusted block root, update
 * validation (participation, slot order, period, finality branch, next-sync-committee branch,
 * Capella-and-later execution branch, the sync committee's aggregate signature under the fork
 * version's domain) and the store transitions. Pure functions over the store; every rejection
 * is a LightClientError naming the rule.
 */
import { bytesToHex } from '../eth/hex.js';
import { committeeKeys, fastAggregateVerify } from './bls.js';
import { epochAtSlot, forkAtEpoch, isForkActive, periodAtSlot, type BeaconChainConfig } from './config.js';
import { LightClientError } from './errors.js';
import { bytesEqual, floorLog2, isValidMerkleBranch, isValidNormalizedMerkleBranch, subtreeIndex } from './merkle.js';
import { BeaconBlockHeader, CapellaExecutionPayloadHeader, DenebExecutionPayloadHeader, ForkData, SigningData, syncCommitteeType, type SyncCommitteeValue } from './ssz.js';
import {
  participantCount, type LightClientBootstrap, type LightClientFinalityUpdate, type LightClientHeader, type LightClientOptimisticUpdate, type LightClientUpdate,
} from './types.js';

const FINALIZED_ROOT_GINDEX = 105;
const CURRENT_SYNC_COMMITTEE_GINDEX = 54;
const NEXT_SYNC_COMMITTEE_GINDEX = 55;
const FINALIZED_ROOT_GINDEX_ELECTRA = 169;
const CURRENT_SYNC_COMMITTEE_GINDEX_ELECTRA = 86;
const NEXT_SYNC_COMMITTEE_GINDEX_ELECTRA = 87;
const EXECUTION_PAYLOAD_GINDEX = 25;
const MIN_SYNC_COMMITTEE_PARTICIPANTS = 1;
const DOMAIN_SYNC_COMMITTEE = Uint8Array.of(7, 0, 0, 0);

export interface LightClientStore {
  finalizedHeader: LightClientHeader;
  currentSyncCommittee: SyncCommitteeValue;
  /** null: not known yet (`SyncCommittee()` in the spec). */
  nextSyncCommittee: SyncCommitteeValue | null;
  bestValidUpdate: LightClientUpdate | null;
  optimisticHeader: LightClientHeader;
  previousMaxActiveParticipants: number;
  currentMaxActiveParticipants: number;
  /**
   * The finalized checkpoint's epoch, as the finality branch that proved `finalizedHeader` proves it (not part of the
   * spec's store; the consensus Status needs it). Null or absent: not proven (a bootstrap, a forced update), and the
   * epoch of the header's slot stands in — one too low when the checkpoint epoch's first slot was empty.
   */
  finalizedEpoch?: number | null;
}

const electra = (config: BeaconChainConfig, slot: number) => isForkActive(config, 'electra', epochAtSlot(config, slot));
const finalizedRootGindex = (config: BeaconChainConfig, slot: number) => (electra(config, slot) ? FINALIZED_ROOT_GINDEX_ELECTRA : FINALIZED_ROOT_GINDEX);
const currentCommitteeGindex = (config: BeaconChainConfig, slot: number) => (electra(config, slot) ? CURRENT_SYNC_COMMITTEE_GINDEX_ELECTRA : CURRENT_SYNC_COMMITTEE_GINDEX);
const nextCommitteeGindex = (config: BeaconChainConfig, slot: number) => (electra(config, slot) ? NEXT_SYNC_COMMITTEE_GINDEX_ELECTRA : NEXT_SYNC_COMMITTEE_GINDEX);

export function beaconHeaderRoot(header: LightClientHeader): Uint8Array {
  return BeaconBlockHeader.hashTreeRoot(header.beacon);
}

/** `get_lc_execution_root`: the execution header's root in the shape of the header's own fork. */
function executionRoot(config: BeaconChainConfig, header: LightClientHeader): Uint8Array {
  const epoch = epochAtSlot(config, header.beacon.slot);
  const execution = header.execution!;
  if (isForkActive(config, 'deneb', epoch)) return DenebExecutionPayloadHeader.hashTreeRoot(execution);
  const { blobGasUsed: _used, excessBlobGas: _excess, ...capella } = execution;
  return CapellaExecutionPayloadHeader.hashTreeRoot(capella);
}

/** `is_valid_light_client_header`, raising why not. */
export function assertValidHeader(config: BeaconChainConfig, header: LightClientHeader, what: string): void {
  const epoch = epochAtSlot(config, header.beacon.slot);
  const execution = header.execution;
  if (!isForkActive(config, 'capella', epoch)) {
    if (execution !== null || header.executionBranch.some((node) => node.some((b) => b !== 0))) {
      throw new LightClientError('invalid_header', `${what} at slot ${header.beacon.slot} is before Capella but carries an execution header`);
    }
    return;
  }
  if (execution === null) throw new LightClientError('invalid_header', `${what} at slot ${header.beacon.slot} has no execution header`);
  if (!isForkActive(config, 'deneb', epoch) && (execution.blobGasUsed !== 0 || execution.excessBlobGas !== 0)) {
    throw new LightClientError('invalid_header', `${what} at slot ${header.beacon.slot} is before Deneb but has blob gas fields`);
  }
  const valid = isValidMerkleBranch(executionRoot(config, header), header.executionBranch, floorLog2(EXECUTION_PAYLOAD_GINDEX), subtreeIndex(EXECUTION_PAYLOAD_GINDEX), header.beacon.bodyRoot);
  if (!valid) throw new LightClientError('invalid_header', `${what} at slot ${header.beacon.slot}: execution_branch does not prove the execution header against body_root`);
}

/** `initialize_light_client_store`: the bootstrap must be the header of the trusted block root with its state's current sync committee. */
export function initializeStore(config: BeaconChainConfig, trustedBlockRoot: Uint8Array, bootstrap: LightClientBootstrap): LightClientStore {
  assertValidHeader(config, bootstrap.header, 'bootstrap header');
  const root = beaconHeaderRoot(bootstrap.header);
  if (!bytesEqual(root, trustedBlockRoot)) {
    throw new LightClientError('bootstrap_root_mismatch', `bootstrap header root ${bytesToHex(root)} is not the trusted block root ${bytesToHex(trustedBlockRoot)}`);
  }
  const leaf = syncCommitteeType(config.syncCommitteeSize).hashTreeRoot(bootstrap.currentSyncCommittee);
  if (!isValidNormalizedMerkleBranch(leaf, bootstrap.currentSyncCommitteeBranch, currentCommitteeGindex(config, bootstrap.header.beacon.slot), bootstrap.header.beacon.stateRoot)) {
    throw new LightClientError('invalid_current_committee_branch', `current_sync_committee_branch does not prove the committee against state root ${bytesToHex(bootstrap.header.beacon.stateRoot)}`);
  }
  return {
    finalizedHeader: bootstrap.header,
    currentSyncCommittee: bootstrap.currentSyncCommittee,
    nextSyncCommittee: null,
    bestValidUpdate: null,
    optimisticHeader: bootstrap.header,
    previousMaxActiveParticipants: 0,
    currentMaxActiveParticipants: 0,
  };
}

/** `compute_domain(DOMAIN_SYNC_COMMITTEE, fork_version, genesis_validators_root)`. */
export function syncCommitteeDomain(config: BeaconChainConfig, forkVersion: Uint8Array): Uint8Array {
  const forkDataRoot = ForkData.hashTreeRoot({ currentVersion: forkVersion, genesisValidatorsRoot: config.genesisValidatorsRoot });
  const domain = new Uint8Array(32);
  domain.set(DOMAIN_SYNC_COMMITTEE, 0);
  domain.set(forkDataRoot.subarray(0, 28), 4);
  return domain;
}

/** The root a sync committee signs for `attested` when the signature is made at `signatureSlot`. */
export function syncCommitteeSigningRoot(config: BeaconChainConfig, attested: LightClientHeader, signatureSlot: number): Uint8Array {
  const forkVersionSlot = Math.max(signatureSlot, 1) - 1;
  const domain = syncCommitteeDomain(config, forkAtEpoch(config, epochAtSlot(config, forkVersionSlot)).version);
  return SigningData.hashTreeRoot({ objectRoot: beaconHeaderRoot(attested), domain });
}

function sameCommittee(config: BeaconChainConfig, a: SyncCommitteeValue, b: SyncCommitteeValue): boolean {
  const type = syncCommitteeType(config.syncCommitteeSize);
  return bytesEqual(type.hashTreeRoot(a), type.hashTreeRoot(b));
}

/** `validate_light_client_update`. */
export function validateUpdate(config: BeaconChainConfig, store: LightClientStore, update: LightClientUpdate, currentSlot: number): void {
  const participants = participantCount(update.syncAggregate);
  if (participants < MIN_SYNC_COMMITTEE_PARTICIPANTS) throw new LightClientError('too_few_participants', `${participants} sync committee participants`);
  assertValidHeader(config, update.attestedHeader, 'attested header');
  const attestedSlot = update.attestedHeader.beacon.slot;
  const finalizedSlot = update.finalizedHeader?.beacon.slot ?? 0;
  if (!(currentSlot >= update.signatureSlot && update.signatureSlot > attestedSlot && attestedSlot >= finalizedSlot)) {
    throw new LightClientError('invalid_slot_order', `expected current ${currentSlot} ≥ signature ${update.signatureSlot} > attested ${attestedSlot} ≥ finalized ${finalizedSlot}`);
  }
  const storePeriod = periodAtSlot(config, store.finalizedHeader.beacon.slot);
  const signaturePeriod = periodAtSlot(config, update.signatureSlot);
  const nextKnown = store.nextSyncCommittee !== null;
  if (nextKnown ? signaturePeriod !== storePeriod && signaturePeriod !== storePeriod + 1 : signaturePeriod !== storePeriod) {
    throw new LightClientError('period_not_followable', `signature period ${signaturePeriod} cannot follow store period ${storePeriod} (next committee ${nextKnown ? 'known' : 'unknown'})`);
  }
  const attestedPeriod = periodAtSlot(config, attestedSlot);
  const hasNextCommittee = !nextKnown && update.nextSyncCommittee !== null && attestedPeriod === storePeriod;
  if (!(attestedSlot > store.finalizedHeader.beacon.slot || hasNextCommittee)) {
    throw new LightClientError('irrelevant_update', `attested slot ${attestedSlot} is not after the finalized slot ${store.finalizedHeader.beacon.slot} and brings no next committee`);
  }
  if (update.finalizedHeader !== null) {
    // A finalized slot of 0 is genesis: its checkpoint root is the zero hash.
    let leaf: Uint8Array;
    if (update.finalizedHeader.beacon.slot === 0) leaf = new Uint8Array(32);
    else {
      assertValidHeader(config, update.finalizedHeader, 'finalized header');
      leaf = beaconHeaderRoot(update.finalizedHeader);
    }
    if (!isValidNormalizedMerkleBranch(leaf, update.finalityBranch, finalizedRootGindex(config, attestedSlot), update.attestedHeader.beacon.stateRoot)) {
      throw new LightClientError('invalid_finality_branch', `finality_branch does not prove finalized header ${bytesToHex(leaf)} (slot ${update.finalizedHeader.beacon.slot}) in the state of attested slot ${attestedSlot}`);
    }
  }
  if (update.nextSyncCommittee !== null) {
    if (attestedPeriod === storePeriod && store.nextSyncCommittee !== null && !sameCommittee(config, update.nextSyncCommittee, store.nextSyncCommittee)) {
      throw new LightClientError('next_committee_mismatch', `next sync committee of period ${attestedPeriod + 1} differs from the one already known`);
    }
    const leaf = syncCommitteeType(config.syncCommitteeSize).hashTreeRoot(update.nextSyncCommittee);
    if (!isValidNormalizedMerkleBranch(leaf, update.nextSyncCommitteeBranch, nextCommitteeGindex(config, attestedSlot), update.attestedHeader.beacon.stateRoot)) {
      throw new LightClientError('invalid_next_committee_branch', `next_sync_committee_branch does not prove the committee in the state of attested slot ${attestedSlot}`);
    }
  }
  const committee = signaturePeriod === storePeriod ? store.currentSyncCommittee : store.nextSyncCommittee!;
  const signingRoot = syncCommitteeSigningRoot(config, update.attestedHeader, update.signatureSlot);
  if (!fastAggregateVerify(committeeKeys(committee.pubkeys), update.syncAggregate.bits, signingRoot, update.syncAggregate.signature)) {
    throw new LightClientError('invalid_signature', `the sync committee of period ${signaturePeriod} did not sign attested slot ${attestedSlot} (${participants} participants)`);
  }
}

/**
 * The epoch of the finalized checkpoint a verified update proves. `finality_branch` proves
 * `finalized_checkpoint.root` in the attested state; the first node above the leaf (after the zero padding of a
 * normalized branch) is its sibling in the `Checkpoint` container, the `epoch` leaf: a little-endian uint64 in 32
 * bytes. Null when the update proves no finalized header, or the leaf is not a plausible epoch for it.
 */
export function provenCheckpointEpoch(config: BeaconChainConfig, update: LightClientUpdate): number | null {
  if (update.finalizedHeader === null) return null;
  const depth = floorLog2(finalizedRootGindex(config, update.attestedHeader.beacon.slot));
  const leaf = update.finalityBranch[update.finalityBranch.length - depth];
  if (leaf === undefined || leaf.length !== 32 || leaf.subarray(8).some((byte) => byte !== 0)) return null;
  const epoch = Buffer.from(leaf.buffer, leaf.byteOffset, 8).readBigUInt64LE(0);
  if (epoch > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  // The checkpoint block is the last block at or before the epoch's first slot: never from a later epoch.
  return Number(epoch) >= epochAtSlot(config, update.finalizedHeader.beacon.slot) ? Number(epoch) : null;
}

/** `apply_light_client_update`. */
export function applyUpdate(config: BeaconChainConfig, store: LightClientStore, update: LightClientUpdate): void {
  const storePeriod = periodAtSlot(config, store.finalizedHeader.beacon.slot);
  const finalized = update.finalizedHeader;
  const finalizedPeriod = periodAtSlot(config, finalized?.beacon.slot ?? 0);
  if (store.nextSyncCommittee === null) {
    if (finalizedPeriod !== storePeriod) throw new LightClientError('period_not_followable', `finalized period ${finalizedPeriod} is not the store period ${storePeriod}`);
    store.nextSyncCommittee = update.nextSyncCommittee;
  } else if (finalizedPeriod === storePeriod + 1) {
    store.currentSyncCommittee = store.nextSyncCommittee;
    store.nextSyncCommittee = update.nextSyncCommittee;
    store.previousMaxActiveParticipants = store.currentMaxActiveParticipants;
    store.currentMaxActiveParticipants = 0;
  }
  if (finalized && finalized.beacon.slot > store.finalizedHeader.beacon.slot) {
    store.finalizedHeader = finalized;
    store.finalizedEpoch = provenCheckpointEpoch(config, update);
    if (finalized.beacon.slot > store.optimisticHeader.beacon.slot) store.optimisticHeader = finalized;
  }
}

function isBetterUpdate(config: BeaconChainConfig, next: LightClientUpdate, old: LightClientUpdate): boolean {
  const max = next.syncAggregate.bits.length;
  const newCount = participantCount(next.syncAggregate);
  const oldCount = participantCount(old.syncAggregate);
  const newMajority = newCount * 3 >= max * 2;
  const oldMajority = oldCount * 3 >= max * 2;
  if (newMajority !== oldMajority) return newMajority;
  if (!newMajority && newCount !== oldCount) return newCount > oldCount;
  const relevant = (u: LightClientUpdate) => u.nextSyncCommittee !== null && periodAtSlot(config, u.attestedHeader.beacon.slot) === periodAtSlot(config, u.signatureSlot);
  if (relevant(next) !== relevant(old)) return relevant(next);
  if ((next.finalizedHeader !== null) !== (old.finalizedHeader !== null)) return next.finalizedHeader !== null;
  if (next.finalizedHeader !== null) {
    const committeeFinality = (u: LightClientUpdate) => periodAtSlot(config, u.finalizedHeader!.beacon.slot) === periodAtSlot(config, u.attestedHeader.beacon.slot);
    if (committeeFinality(next) !== committeeFinality(old)) return committeeFinality(next);
  }
  if (newCount !== oldCount) return newCount > oldCount;
  if (next.attestedHeader.beacon.slot !== old.attestedHeader.beacon.slot) return next.attestedHeader.beacon.slot < old.attestedHeader.beacon.slot;
  return next.signatureSlot < old.signatureSlot;
}

export interface UpdateOutcome {
  /** The store's finalized header moved to a later slot. */
  readonly finalizedAdvanced: boolean;
}

/** `process_light_client_update`. */
export function processUpdate(config: BeaconChainConfig, store: LightClientStore, update: LightClientUpdate, currentSlot: number): UpdateOutcome {
  validateUpdate(config, store, update, currentSlot);
  const before = store.finalizedHeader.beacon.slot;
  const participants = participantCount(update.syncAggregate);
  if (store.bestValidUpdate === null || isBetterUpdate(config, update, store.bestValidUpdate)) store.bestValidUpdate = update;
  store.currentMaxActiveParticipants = Math.max(store.currentMaxActiveParticipants, participants);
  const safetyThreshold = Math.floor(Math.max(store.previousMaxActiveParticipants, store.currentMaxActiveParticipants) / 2);
  if (participants > safetyThreshold && update.attestedHeader.beacon.slot > store.optimisticHeader.beacon.slot) store.optimisticHeader = update.attestedHeader;
  const finalizedNextCommittee = store.nextSyncCommittee === null && update.nextSyncCommittee !== null && update.finalizedHeader !== null
    && periodAtSlot(config, update.finalizedHeader.beacon.slot) === periodAtSlot(config, update.attestedHeader.beacon.slot);
  const finalizedSlot = update.finalizedHeader?.beacon.slot ?? 0;
  if (participants * 3 >= update.syncAggregate.bits.length * 2 && (finalizedSlot > store.finalizedHeader.beacon.slot || finalizedNextCommittee)) {
    applyUpdate(config, store, update);
    store.bestValidUpdate = null;
  }
  return { finalizedAdvanced: store.finalizedHeader.beacon.slot > before };
}

function fromFinalityUpdate(update: LightClientFinalityUpdate): LightClientUpdate {
  const hasFinality = update.finalityBranch.some((node) => node.some((b) => b !== 0));
  return { ...update, finalizedHeader: hasFinality ? update.finalizedHeader : null, nextSyncCommittee: null, nextSyncCommitteeBranch: [] };
}

/** `process_light_client_finality_update`. */
export function processFinalityUpdate(config: BeaconChainConfig, store: LightClientStore, update: LightClientFinalityUpdate, currentSlot: number): UpdateOutcome {
  return processUpdate(config, store, fromFinalityUpdate(update), currentSlot);
}

/** The checks of `process_light_client_finality_update` without changing the store. */
export function validateFinalityUpdate(config: BeaconChainConfig, store: LightClientStore, update: LightClientFinalityUpdate, currentSlot: number): void {
  validateUpdate(config, store, fromFinalityUpdate(update), currentSlot);
}

/** `process_light_client_optimistic_update`. */
export function processOptimisticUpdate(config: BeaconChainConfig, store: LightClientStore, update: LightClientOptimisticUpdate, currentSlot: number): UpdateOutcome {
  return processUpdate(config, store, { ...update, finalizedHeader: null, finalityBranch: [], nextSyncCommittee: null, nextSyncCommitteeBranch: [] }, currentSlot);
}

/** `process_light_client_store_force_update`, for when sync appears stuck past UPDATE_TIMEOUT. */
export function forceUpdate(config: BeaconChainConfig, store: LightClientStore, currentSlot: number): boolean {
  const timeout = config.slotsPerEpoch * config.epochsPerSyncCommitteePeriod;
  const best = store.bestValidUpdate;
  if (!(currentSlot > store.finalizedHeader.beacon.slot + timeout && best !== null)) return false;
  // A forced attested header was never proven final: the branch, which proves another header, is dropped with it.
  const forced = best.finalizedHeader === null || best.finalizedHeader.beacon.slot <= store.finalizedHeader.beacon.slot ? { ...best, finalizedHeader: best.attestedHeader, finalityBranch: [] } : best;
  applyUpdate(config, store, forced);
  store.bestValidUpdate = null;
  return true;
}

/** The execution block a verified finalized header commits to (Capella and later). */
export function finalizedExecution(store: LightClientStore): { number: number; hash: Uint8Array; slot: number } | null {
  const execution = store.finalizedHeader.execution;
  return execution === null ? null : { number: execution.blockNumber, hash: execution.blockHash, slot: store.finalizedHeader.beacon.slot };
}
