/**
 * The epoch accumulator of Era1 (eth-clients/e2store-format-specs `formats/era1.md`; EIP-7643): the SSZ
 * hash_tree_root of `List[HeaderRecord{block_hash: Bytes32, total_difficulty: uint256}, 8192]` over an epoch's
 * blocks, in order. An Era1 file stores it (its Accumulator entry) and the node ships mainnet's
 * (mainnet-epoch-roots.ts), so a file whose recomputed root is mainnet's holds mainnet's canonical blocks.
 */
import { ByteVectorType, ContainerType, ListCompositeType, UintBigintType } from '@chainsafe/ssz';

/** Blocks per epoch (and at most per Era1 file). */
export const EPOCH_BLOCKS = 8192;

export interface HeaderRecord {
  readonly blockHash: Uint8Array;
  readonly totalDifficulty: bigint;
}

export const HeaderRecordType = new ContainerType({ blockHash: new ByteVectorType(32), totalDifficulty: new UintBigintType(32) });
export const EpochRecordType = new ListCompositeType(HeaderRecordType, EPOCH_BLOCKS);

/** The epoch accumulator root of `records` (at most 8192). */
export function epochAccumulatorRoot(records: readonly HeaderRecord[]): Uint8Array {
  return EpochRecordType.hashTreeRoot(records as HeaderRecord[]);
}
