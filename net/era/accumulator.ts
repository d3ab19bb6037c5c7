/**
 * The epoch accumulator of Era1 (eth-clients/e2store-format-specs `formats/era1.md`; EIP-7643): the SSZ
 * hash_tree_root of `List[HeaderRecord{block_hash: Bytes32, total_difficulty: uint256}, 8192]` over an epoch's
 * blocks, in order. An Era1 file stores it (its Accumulator entry) and the node ships mainnet's
 * (mainnet-epoch-roots.ts), so a file whose recomputed root is mainnet's holds mainnet's canonical blocks.
 *
 * Computed here with SHA-256 directly (each record's root is sha256(block_hash ‖ total_difficulty as 32 bytes
 * little-endian); the 8192 leaves, padded with zero subtrees, are merkleized 13 levels deep; the length is mixed in
 * last): a sixth of the time @chainsafe/ssz's generic type takes for it. The SSZ types below are the reference a
 * test holds this against.
 */
import { ByteVectorType, ContainerType, ListCompositeType, UintBigintType } from '@chainsafe/ssz';
import { hash } from 'node:crypto';

/** Blocks per epoch (and at most per Era1 file). */
export const EPOCH_BLOCKS = 8192;
const DEPTH = 13; // 2^13 = 8192 leaves

export interface HeaderRecord {
  readonly blockHash: Uint8Array;
  readonly totalDifficulty: bigint;
}

export const HeaderRecordType = new ContainerType({ blockHash: new ByteVectorType(32), totalDifficulty: new UintBigintType(32) });
export const EpochRecordType = new ListCompositeType(HeaderRecordType, EPOCH_BLOCKS);

const sha256 = (data: Uint8Array): Buffer => hash('sha256', data, 'buffer');

/** The roots of all-zero subtrees, by height (height 0: a zero chunk). */
const ZERO_HASHES: Buffer[] = [Buffer.alloc(32)];
for (let height = 1; height <= DEPTH; height++) ZERO_HASHES.push(sha256(Buffer.concat([ZERO_HASHES[height - 1]!, ZERO_HASHES[height - 1]!])));

/** The epoch accumulator root of `records` (at most 8192). */
export function epochAccumulatorRoot(records: readonly HeaderRecord[]): Uint8Array {
  if (records.length > EPOCH_BLOCKS) throw new RangeError(`an epoch holds at most ${EPOCH_BLOCKS} records, not ${records.length}`);
  const pair = Buffer.alloc(64);
  let layer: Buffer[] = records.map((record) => {
    pair.set(record.blockHash, 0);
    let value = record.totalDifficulty;
    for (let i = 32; i < 64; i++) {
      pair[i] = Number(value & 0xffn);
      value >>= 8n;
    }
    if (value !== 0n) throw new RangeError('a total difficulty wider than 256 bits');
    return sha256(pair);
  });
  for (let height = 0; height < DEPTH; height++) {
    const next: Buffer[] = [];
    for (let i = 0; i < layer.length; i += 2) {
      pair.set(layer[i]!, 0);
      pair.set(layer[i + 1] ?? ZERO_HASHES[height]!, 32);
      next.push(sha256(pair));
    }
    layer = next.length > 0 ? next : [ZERO_HASHES[height + 1]!];
  }
  pair.set(layer[0]!, 0);
  pair.fill(0, 32);
  pair.writeUInt32LE(records.length, 32);
  return sha256(pair);
}
