/**
 * Verification of an Era1 file's content. Nothing it hands out is unverified, and a failure is an `Era1BlockError`
 * naming the file, the block and the check.
 *
 * `verifyEpochHeaders` reads every header and total difficulty of a file (bodies and receipts are skipped, not
 * decompressed): each header decodes, is the block the index says, links to the block before it by its parent hash,
 * and carries a total difficulty equal to the previous block's plus its own difficulty (block 0's is its own); then
 * the epoch accumulator root is recomputed from the (block hash, total difficulty) pairs and compared with the root
 * the file states and with the root the node ships for that mainnet epoch. A file that passes holds mainnet's
 * canonical blocks of that epoch, whatever else is on the chain: the hashes it proves are what the rest is checked
 * against.
 *
 * `verifyBlockTuple` then checks one block's body and receipts against its verified header (transactions root,
 * uncles hash, receipts root, logs bloom, gas used: `verifyBlockMaterialBytes`, the check live material passes) and
 * produces the material as the chain tables store it (receipts in the eth/69 form, blooms dropped).
 */
import { BlockVerificationError, EthFormatError, RlpDecodeError } from '../eth/errors.js';
import { receiptsToEth69 } from '../eth/consensus-receipts.js';
import { bytesToHex, type Hash } from '../eth/hex.js';
import { keccak256Hex } from '../eth/keccak.js';
import { emptySpan, readRlpSpan, rlpFields, rlpUint, rlpWhole } from '../eth/rlp-walk.js';
import { verifyBlockMaterialBytes } from '../eth/verify-material.js';
import type { HistoryBlock } from '../history/history-block.js';
import { EPOCH_BLOCKS, epochAccumulatorRoot, type HeaderRecord } from './accumulator.js';
import type { Era1File, RawBlockTuple } from './era1-file.js';
import { Era1BlockError, Era1FormatError } from './errors.js';
import { decodeSnappyFramed } from './snappy-framed.js';

/** A file whose headers, total difficulties and accumulator root were verified. */
export interface VerifiedEpoch {
  readonly file: string;
  /** The epoch (file number): its first block is epoch × 8192. */
  readonly epoch: number;
  readonly startBlock: number;
  readonly count: number;
  /** Each block's hash and parent hash, in order. */
  readonly hashes: readonly Hash[];
  readonly parentHashes: readonly Hash[];
  /** The accumulator root recomputed from the file's blocks (equal to the file's and to the shipped one). */
  readonly root: Hash;
}

/** Blocks read at once during the header pass (their bodies and receipts are read too, not decompressed: late mainnet epochs hold ~300 KB a block). */
const HEADER_PASS_BLOCKS = 128;

/**
 * Verifies `file`'s headers, total difficulties and accumulator root against `expectedRoots` (the shipped roots,
 * by epoch). `asked` is the block whose request made the file be read: file-wide failures (the accumulator) name it.
 */
export async function verifyEpochHeaders(file: Era1File, expectedRoots: readonly string[], asked: number): Promise<VerifiedEpoch> {
  const fail = (number: number, check: string): never => {
    throw new Era1BlockError(file.name, number, check);
  };
  if (file.startBlock % EPOCH_BLOCKS !== 0) fail(file.startBlock, `the file starts at block ${file.startBlock}, not at an epoch boundary (a multiple of ${EPOCH_BLOCKS})`);
  const epoch = file.startBlock / EPOCH_BLOCKS;
  const expected = expectedRoots[epoch];
  if (expected === undefined) fail(asked, `epoch ${epoch} is past the merge: mainnet has ${expectedRoots.length} pre-merge epochs, and Era1 holds none after them`);
  if (epoch < expectedRoots.length - 1 && file.count !== EPOCH_BLOCKS) fail(file.endBlock, `the file holds ${file.count} blocks; every epoch before the last pre-merge one has ${EPOCH_BLOCKS}`);
  const hashes: Hash[] = [];
  const parentHashes: Hash[] = [];
  const records: HeaderRecord[] = [];
  let previousTotal = 0n;
  for (let from = file.startBlock; from <= file.endBlock; from += HEADER_PASS_BLOCKS) {
    const to = Math.min(file.endBlock, from + HEADER_PASS_BLOCKS - 1);
    for (const tuple of await readTuples(file, from, to, asked)) {
      const { number } = tuple;
      const bytes = decompress(file.name, number, 'header', tuple.header);
      const header = headerFields(file.name, number, bytes);
      if (header.number !== number) fail(number, `the header is block ${header.number}'s, not the block the index places here`);
      const hash = keccak256Hex(bytes);
      const index = number - file.startBlock;
      if (index > 0 && header.parentHash !== hashes[index - 1]) fail(number, `parent hash mismatch: the header names parent ${header.parentHash}, block ${number - 1} hashes to ${hashes[index - 1]}`);
      if (index > 0 || number === 0) {
        const total = (number === 0 ? 0n : previousTotal) + header.difficulty;
        if (tuple.totalDifficulty !== total) {
          fail(number, `total difficulty mismatch: the file says ${tuple.totalDifficulty}, ${number === 0 ? 'the genesis difficulty is' : `block ${number - 1}'s total plus this block's difficulty is`} ${total}`);
        }
      }
      previousTotal = tuple.totalDifficulty;
      hashes.push(hash);
      parentHashes.push(header.parentHash);
      records.push({ blockHash: hexBytes(hash), totalDifficulty: tuple.totalDifficulty });
    }
  }
  const root = bytesToHex(epochAccumulatorRoot(records)) as Hash;
  const stated = bytesToHex(file.accumulatorRoot);
  if (root !== stated) fail(asked, `accumulator root mismatch: the file states ${stated}, its ${records.length} (block hash, total difficulty) pairs give ${root}`);
  if (root !== expected) fail(asked, `accumulator root mismatch: ${root} is not mainnet's epoch ${epoch} root ${expected!} (net/era/mainnet-epoch-roots.txt): not mainnet's canonical blocks`);
  return { file: file.name, epoch, startBlock: file.startBlock, count: file.count, hashes, parentHashes, root };
}

interface HeaderFields {
  readonly parentHash: Hash;
  readonly difficulty: bigint;
  readonly number: number;
}

const HEADER = 'block header';

/**
 * The header fields the header pass needs, read in place (the block's full decode, `decodeHeader`, comes with its
 * body check, verifyBlockTuple): a canonical RLP list of a header's field count (15 before London, 16 after).
 */
function headerFields(file: string, number: number, bytes: Uint8Array): HeaderFields {
  try {
    const fields = rlpFields(bytes, rlpWhole(bytes, HEADER), HEADER, [15, 16]);
    const parent = fields[0]!;
    if (parent.list || parent.end - parent.payload !== 32) throw new RlpDecodeError(HEADER, 'field parentHash: expected 32 bytes');
    return {
      parentHash: bytesToHex(bytes.subarray(parent.payload, parent.end)) as Hash,
      difficulty: rlpUint(bytes, fields[7]!, HEADER, 'difficulty', 32),
      number: Number(rlpUint(bytes, fields[8]!, HEADER, 'number', 6)),
    };
  } catch (error) {
    if (error instanceof EthFormatError) throw new Era1BlockError(file, number, `header: malformed (${error.message})`);
    throw error;
  }
}

/** Block `tuple.number` of a verified epoch: its body and receipts checked against its header, as stored material. */
export function verifyBlockTuple(epoch: VerifiedEpoch, tuple: RawBlockTuple): HistoryBlock {
  const { number } = tuple;
  const fail = (check: string): never => {
    throw new Era1BlockError(epoch.file, number, check);
  };
  const expectedHash = epoch.hashes[number - epoch.startBlock];
  if (expectedHash === undefined) throw new RangeError(`block ${number} is not in ${epoch.file}`);
  const header = decompress(epoch.file, number, 'header', tuple.header);
  const body = decompress(epoch.file, number, 'body', tuple.body);
  const consensusReceipts = decompress(epoch.file, number, 'receipts', tuple.receipts);
  let receipts: Uint8Array;
  try {
    receipts = receiptsToEth69(receiptItems(consensusReceipts));
  } catch (error) {
    if (error instanceof EthFormatError) fail(`receipts: malformed (${error.message})`);
    throw error;
  }
  try {
    const verified = verifyBlockMaterialBytes({ header, body, receipts: receipts!, expectedHash });
    return { number, hash: verified.hash, parentHash: verified.header.parentHash, material: { number, hash: hexBytes(verified.hash), header, body, receipts: receipts! } };
  } catch (error) {
    if (error instanceof BlockVerificationError) {
      if (error.field === 'hash') fail(`header changed since the file was verified: it hashes to ${error.actual}, the verified header to ${error.expected}`);
      fail(`${CHECK_NAMES[error.field] ?? error.field} mismatch (the header says ${error.expected}, the ${error.field === 'receiptsRoot' || error.field === 'logsBloom' || error.field === 'gasUsed' || error.field === 'receiptCount' ? 'receipts give' : 'body gives'} ${error.actual})`);
    }
    if (error instanceof EthFormatError) fail(`body: malformed (${error.message})`);
    throw error;
  }
}

const CHECK_NAMES: Partial<Record<BlockVerificationError['field'], string>> = {
  transactionsRoot: 'transactions root',
  sha3Uncles: 'uncles hash',
  receiptsRoot: 'receipts root',
  logsBloom: 'logs bloom',
  gasUsed: 'gas used',
  receiptCount: 'receipt count',
  withdrawalsRoot: 'withdrawals root',
  blobGasUsed: 'blob gas used',
};

/** Reads tuples, naming the file and the block asked for when the file's structure is broken. */
export async function readTuples(file: Era1File, from: number, to: number, asked: number): Promise<RawBlockTuple[]> {
  try {
    return await file.readTuples(from, to);
  } catch (error) {
    if (error instanceof Era1FormatError) throw new Era1BlockError(file.name, asked, `unreadable block tuples ${from}-${to}: ${error.message}`);
    throw error;
  }
}

function decompress(file: string, number: number, what: string, bytes: Uint8Array): Uint8Array {
  try {
    return decodeSnappyFramed(bytes);
  } catch (error) {
    if (error instanceof Era1FormatError) throw new Era1BlockError(file, number, `${what}: ${error.message}`);
    throw error;
  }
}

/**
 * The receipts entry, `rlp([receipt, …])` with each receipt in its consensus encoding (a legacy one as its RLP
 * list, a typed one as a byte string holding `type || rlp(…)`), as one encoding per receipt.
 */
function receiptItems(bytes: Uint8Array): Uint8Array[] {
  const subject = 'Era1 receipt list';
  const list = rlpWhole(bytes, subject);
  if (!list.list) throw new RlpDecodeError(subject, 'expected an RLP list, got a byte string');
  const items: Uint8Array[] = [];
  const item = emptySpan();
  for (let offset = list.payload; offset < list.end; offset = item.end) {
    readRlpSpan(item, bytes, offset, list.end, subject);
    items.push(item.list ? bytes.subarray(item.offset, item.end) : bytes.subarray(item.payload, item.end));
  }
  return items;
}

function hexBytes(hash: string): Uint8Array {
  return Buffer.from(hash.slice(2), 'hex');
}
