/**
 * The light-client containers as SSZ bytes (consensus-specs altair, capella, deneb, electra `light-client/sync-protocol.md`),
 * for the consensus p2p req/resp and gossip domains. Each fork has its own shape: Altair headers have no execution part,
 * Capella adds the Capella execution payload header and its branch, Deneb the blob gas fields, Electra lengthens the
 * state branches (finality 7, sync committee 6); Fulu keeps Electra's. Bytes decode with the fork the peer's context
 * bytes name, then become the Beacon API JSON shape so ../json.ts checks every field and ../sync-protocol.ts verifies
 * them exactly as in `beacon_api` proof mode.
 */
import { BitVectorType, ByteListType, ByteVectorType, ContainerType, UintNumberType, VectorCompositeType } from '@chainsafe/ssz';
import type { BeaconChainConfig, ForkName } from '../config.js';
import { BeaconBlockHeader, Bytes32, CapellaExecutionPayloadHeader, DenebExecutionPayloadHeader, syncCommitteeType } from '../ssz.js';

const Uint64 = new UintNumberType(8);
const eth2 = { jsonCase: 'eth2' as const };
const branch = (depth: number) => new VectorCompositeType(Bytes32, depth);

export type LightClientKind = 'bootstrap' | 'update' | 'finality_update' | 'optimistic_update';

type AnyType = { serialize(value: unknown): Uint8Array; deserialize(bytes: Uint8Array): unknown; toJson(value: unknown): unknown; fromJson(json: unknown): unknown; maxSize: number; minSize: number };

interface ForkTypes {
  readonly bootstrap: AnyType;
  readonly update: AnyType;
  readonly finality_update: AnyType;
  readonly optimistic_update: AnyType;
}

function forkTypes(committeeSize: number, fork: 'altair' | 'capella' | 'deneb' | 'electra'): ForkTypes {
  const header = fork === 'altair'
    ? new ContainerType({ beacon: BeaconBlockHeader }, eth2)
    : new ContainerType({ beacon: BeaconBlockHeader, execution: fork === 'capella' ? CapellaExecutionPayloadHeader : DenebExecutionPayloadHeader, executionBranch: branch(4) }, eth2);
  const electra = fork === 'electra';
  const committee = syncCommitteeType(committeeSize);
  const aggregate = new ContainerType({ syncCommitteeBits: new BitVectorType(committeeSize), syncCommitteeSignature: new ByteVectorType(96) }, eth2);
  const committeeBranch = branch(electra ? 6 : 5);
  const finalityBranch = branch(electra ? 7 : 6);
  return {
    bootstrap: new ContainerType({ header, currentSyncCommittee: committee, currentSyncCommitteeBranch: committeeBranch }, eth2) as unknown as AnyType,
    update: new ContainerType({
      attestedHeader: header, nextSyncCommittee: committee, nextSyncCommitteeBranch: committeeBranch, finalizedHeader: header, finalityBranch,
      syncAggregate: aggregate, signatureSlot: Uint64,
    }, eth2) as unknown as AnyType,
    finality_update: new ContainerType({ attestedHeader: header, finalizedHeader: header, finalityBranch, syncAggregate: aggregate, signatureSlot: Uint64 }, eth2) as unknown as AnyType,
    optimistic_update: new ContainerType({ attestedHeader: header, syncAggregate: aggregate, signatureSlot: Uint64 }, eth2) as unknown as AnyType,
  };
}

const cache = new Map<string, ForkTypes>();

/** The SSZ shape a fork gives light-client objects; null before Altair (there are none). */
export function lightClientTypes(config: BeaconChainConfig, fork: ForkName): ForkTypes | null {
  const shape = fork === 'phase0' ? null : fork === 'altair' || fork === 'bellatrix' ? 'altair' : fork === 'capella' ? 'capella' : fork === 'deneb' ? 'deneb' : 'electra';
  if (shape === null) return null;
  const key = `${config.syncCommitteeSize}:${shape}`;
  let types = cache.get(key);
  if (!types) {
    types = forkTypes(config.syncCommitteeSize, shape);
    cache.set(key, types);
  }
  return types;
}

/** The Beacon API's `version` name for a fork. */
export const versionName = (fork: ForkName): string => fork;

/** SSZ bytes of a light-client object of `fork` → the Beacon API JSON (`{version, data}`) the JSON parser reads. */
export function sszToJson(config: BeaconChainConfig, fork: ForkName, kind: LightClientKind, bytes: Uint8Array): { version: string; data: unknown } {
  const types = lightClientTypes(config, fork);
  if (!types) throw new Error(`no light-client ${kind} exists in fork ${fork}`);
  const type = types[kind];
  const data = type.toJson(type.deserialize(bytes));
  return { version: versionName(fork), data };
}

/** The Beacon API JSON of a light-client object (its `data`) → SSZ bytes in `fork`'s shape (the devnet's peer serves these). */
export function jsonToSsz(config: BeaconChainConfig, fork: ForkName, kind: LightClientKind, data: unknown): Uint8Array {
  const types = lightClientTypes(config, fork);
  if (!types) throw new Error(`no light-client ${kind} exists in fork ${fork}`);
  const type = types[kind];
  return type.serialize(type.fromJson(data));
}

/** The largest SSZ size a light-client object of `kind` has in any fork (a bound on a response chunk's declared length). */
export function maxLightClientSize(config: BeaconChainConfig, kind: LightClientKind): number {
  return Math.max(...(['altair', 'capella', 'deneb', 'electra'] as const).map((fork) => lightClientTypes(config, fork)![kind].maxSize));
}

/** `LightClientUpdatesByRange` request: `(start_period: Uint64, count: Uint64)`. */
export const UpdatesByRangeRequest = new ContainerType({ startPeriod: Uint64, count: Uint64 }, eth2);
/** An ErrorMessage payload: `List[Byte, 256]`. */
export const ErrorMessage = new ByteListType(256);
