/**
 * The SSZ containers the light-client sync protocol hashes (consensus-specs phase0/altair/capella/
 * deneb): block header, sync committee, execution payload header, and the signing containers. The
 * Beacon API delivers these as JSON; `@chainsafe/ssz` parses them (snake_case keys) and computes
 * each `hash_tree_root`.
 */
import { ByteListType, ByteVectorType, ContainerType, UintBigintType, UintNumberType, VectorCompositeType, type ValueOf } from '@chainsafe/ssz';

const Bytes4 = new ByteVectorType(4);
const Bytes20 = new ByteVectorType(20);
export const Bytes32 = new ByteVectorType(32);
const Bytes48 = new ByteVectorType(48);
const Bytes96 = new ByteVectorType(96);
const LogsBloom = new ByteVectorType(256);
const ExtraData = new ByteListType(32);
const Uint64 = new UintNumberType(8);
const Uint256 = new UintBigintType(32);

const eth2 = { jsonCase: 'eth2' as const };

export const BeaconBlockHeader = new ContainerType({
  slot: Uint64,
  proposerIndex: Uint64,
  parentRoot: Bytes32,
  stateRoot: Bytes32,
  bodyRoot: Bytes32,
}, eth2);
export type BeaconBlockHeaderValue = ValueOf<typeof BeaconBlockHeader>;

const capellaPayloadFields = {
  parentHash: Bytes32,
  feeRecipient: Bytes20,
  stateRoot: Bytes32,
  receiptsRoot: Bytes32,
  logsBloom: LogsBloom,
  prevRandao: Bytes32,
  blockNumber: Uint64,
  gasLimit: Uint64,
  gasUsed: Uint64,
  timestamp: Uint64,
  extraData: ExtraData,
  baseFeePerGas: Uint256,
  blockHash: Bytes32,
  transactionsRoot: Bytes32,
  withdrawalsRoot: Bytes32,
};
export const CapellaExecutionPayloadHeader = new ContainerType(capellaPayloadFields, eth2);
/** Deneb's header (also Electra's and Fulu's): Capella's plus the blob gas fields. */
export const DenebExecutionPayloadHeader = new ContainerType({ ...capellaPayloadFields, blobGasUsed: Uint64, excessBlobGas: Uint64 }, eth2);
/** Execution headers are held in the Deneb shape; pre-Deneb headers carry zero blob gas fields. */
export type ExecutionPayloadHeaderValue = ValueOf<typeof DenebExecutionPayloadHeader>;

const committeeTypes = new Map<number, ContainerType<{ pubkeys: VectorCompositeType<ByteVectorType>; aggregatePubkey: ByteVectorType }>>();

/** `SyncCommittee` for a preset's SYNC_COMMITTEE_SIZE (512 on mainnet). */
export function syncCommitteeType(size: number) {
  let type = committeeTypes.get(size);
  if (!type) {
    type = new ContainerType({ pubkeys: new VectorCompositeType(Bytes48, size), aggregatePubkey: Bytes48 }, eth2);
    committeeTypes.set(size, type);
  }
  return type;
}
export interface SyncCommitteeValue {
  readonly pubkeys: Uint8Array[];
  readonly aggregatePubkey: Uint8Array;
}

export const ForkData = new ContainerType({ currentVersion: Bytes4, genesisValidatorsRoot: Bytes32 }, eth2);
export const SigningData = new ContainerType({ objectRoot: Bytes32, domain: Bytes32 }, eth2);
export const BlsSignature = Bytes96;
