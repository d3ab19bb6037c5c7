/**
 * Light-client objects (consensus-specs altair → electra `light-client/sync-protocol.md`) in the
 * shape the sync protocol works on. An update's absent parts (`SyncCommittee()`, an all-zero
 * branch, the default header) are `null` here; the JSON parser maps one to the other.
 */
import type { BeaconBlockHeaderValue, ExecutionPayloadHeaderValue, SyncCommitteeValue } from './ssz.js';

export interface LightClientHeader {
  readonly beacon: BeaconBlockHeaderValue;
  /** Capella and later: the execution payload header proven against `beacon.body_root`; null before. */
  readonly execution: ExecutionPayloadHeaderValue | null;
  readonly executionBranch: readonly Uint8Array[];
}

export interface SyncAggregate {
  /** One flag per committee member, in committee order. */
  readonly bits: readonly boolean[];
  readonly signature: Uint8Array;
}

export interface LightClientBootstrap {
  readonly header: LightClientHeader;
  readonly currentSyncCommittee: SyncCommitteeValue;
  readonly currentSyncCommitteeBranch: readonly Uint8Array[];
}

export interface LightClientUpdate {
  readonly attestedHeader: LightClientHeader;
  /** null: not a sync-committee update (the branch is all zero). */
  readonly nextSyncCommittee: SyncCommitteeValue | null;
  readonly nextSyncCommitteeBranch: readonly Uint8Array[];
  /** null: not a finality update (the branch is all zero). */
  readonly finalizedHeader: LightClientHeader | null;
  readonly finalityBranch: readonly Uint8Array[];
  readonly syncAggregate: SyncAggregate;
  readonly signatureSlot: number;
}

export type LightClientFinalityUpdate = Omit<LightClientUpdate, 'nextSyncCommittee' | 'nextSyncCommitteeBranch'> & { readonly finalizedHeader: LightClientHeader };
export type LightClientOptimisticUpdate = Pick<LightClientUpdate, 'attestedHeader' | 'syncAggregate' | 'signatureSlot'>;

export function participantCount(aggregate: SyncAggregate): number {
  let count = 0;
  for (const bit of aggregate.bits) if (bit) count++;
  return count;
}
