/**
 * One Era1 file on disk, read in place (eth-clients/e2store-format-specs `formats/era1.md`):
 *
 *   Version | block-tuple* | other-entries* | Accumulator | BlockIndex
 *   block-tuple := CompressedHeader | CompressedBody | CompressedReceipts | TotalDifficulty
 *
 * Opening reads only the BlockIndex (starting block number, one offset per block relative to the index entry,
 * count) and the Accumulator entry before it; block tuples are read on demand, a contiguous run of them with one
 * read, so a file of hundreds of megabytes is never held whole. The compressed entries are handed out as they are
 * (snappy-framed RLP) with each block's total difficulty (a little-endian uint256).
 */
import { open, type FileHandle } from 'node:fs/promises';
import { E2_TYPE, ENTRY_HEADER_BYTES, readEntryOf } from './e2store.js';
import { EPOCH_BLOCKS } from './accumulator.js';
import { Era1FormatError } from './errors.js';

/** One block's entries, still compressed. */
export interface RawBlockTuple {
  readonly number: number;
  readonly header: Uint8Array;
  readonly body: Uint8Array;
  readonly receipts: Uint8Array;
  readonly totalDifficulty: bigint;
}

/** Bytes of a run of tuples read at once, at most (a longer run is read in several reads). */
const MAX_READ_BYTES = 64 * 1024 * 1024;

export class Era1File {
  private constructor(
    private readonly handle: FileHandle,
    /** The file's name (what errors say). */
    readonly name: string,
    /** The number of its first block, and how many it holds. */
    readonly startBlock: number,
    readonly count: number,
    /** The Accumulator entry's root as the file states it. */
    readonly accumulatorRoot: Uint8Array,
    /** Absolute offsets of each tuple, then of the Accumulator entry (where the last tuple's run ends at the latest). */
    private readonly offsets: readonly number[],
  ) {}

  /** Opens and indexes the file at `path`; throws Era1FormatError when it is not an Era1 file. */
  static async open(path: string, name: string): Promise<Era1File> {
    const handle = await open(path, 'r');
    try {
      const size = (await handle.stat()).size;
      const version = await readAt(handle, 0, ENTRY_HEADER_BYTES);
      readEntryOf(version, 0, E2_TYPE.version, 'the Version entry');
      if (size < ENTRY_HEADER_BYTES * 3 + 32 + 24) throw new Era1FormatError(`${size} bytes are too few for an Era1 file`);
      const tail = await readAt(handle, size - 8, 8);
      const count = Number(new DataView(tail.buffer, tail.byteOffset, 8).getBigInt64(0, true));
      if (!(count >= 1 && count <= EPOCH_BLOCKS)) throw new Era1FormatError(`the BlockIndex counts ${count} blocks (expected 1 to ${EPOCH_BLOCKS})`);
      const indexLength = 16 + 8 * count;
      const indexOffset = size - ENTRY_HEADER_BYTES - indexLength;
      const accumulatorOffset = indexOffset - ENTRY_HEADER_BYTES - 32;
      if (accumulatorOffset < ENTRY_HEADER_BYTES) throw new Era1FormatError(`a BlockIndex of ${count} blocks does not fit in ${size} bytes`);
      const tailBytes = await readAt(handle, accumulatorOffset, size - accumulatorOffset);
      const accumulator = readEntryOf(tailBytes, 0, E2_TYPE.accumulator, 'the Accumulator entry');
      if (accumulator.dataEnd - accumulator.dataStart !== 32) throw new Era1FormatError('the Accumulator entry does not hold 32 bytes');
      const index = readEntryOf(tailBytes, accumulator.dataEnd, E2_TYPE.blockIndex, 'the BlockIndex entry');
      if (index.dataEnd - index.dataStart !== indexLength) throw new Era1FormatError(`the BlockIndex entry holds ${index.dataEnd - index.dataStart} bytes, expected ${indexLength}`);
      const view = new DataView(tailBytes.buffer, tailBytes.byteOffset, tailBytes.length);
      const startBlock = Number(view.getBigInt64(index.dataStart, true));
      if (!(startBlock >= 0 && Number.isSafeInteger(startBlock + count))) throw new Era1FormatError(`the BlockIndex starts at block ${startBlock}`);
      const offsets: number[] = [];
      for (let i = 0; i < count; i++) {
        const offset = indexOffset + Number(view.getBigInt64(index.dataStart + 8 + 8 * i, true));
        const previous = offsets.at(-1) ?? ENTRY_HEADER_BYTES - 1;
        if (!(offset > previous && offset < accumulatorOffset)) throw new Era1FormatError(`the BlockIndex places block ${startBlock + i} at byte ${offset}, outside the file's block tuples or out of order`);
        offsets.push(offset);
      }
      offsets.push(accumulatorOffset);
      const root = tailBytes.slice(accumulator.dataStart, accumulator.dataEnd);
      return new Era1File(handle, name, startBlock, count, root, offsets);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** The last block the file holds. */
  get endBlock(): number {
    return this.startBlock + this.count - 1;
  }

  /** Blocks `from`..`to` (numbers within the file), in order, their entries still compressed. */
  async readTuples(from: number, to: number): Promise<RawBlockTuple[]> {
    if (from < this.startBlock || to > this.endBlock || from > to) throw new RangeError(`${this.name} holds blocks ${this.startBlock}-${this.endBlock}, not ${from}-${to}`);
    const tuples: RawBlockTuple[] = [];
    let first = from - this.startBlock;
    const last = to - this.startBlock;
    while (first <= last) {
      // As many tuples as fit in one read (always at least one).
      let end = first + 1;
      while (end <= last && this.offsets[end + 1]! - this.offsets[first]! <= MAX_READ_BYTES) end += 1;
      const base = this.offsets[first]!;
      const bytes = await readAt(this.handle, base, this.offsets[end]! - base);
      for (let i = first; i < end; i++) tuples.push(parseTuple(bytes, this.offsets[i]! - base, this.startBlock + i));
      first = end;
    }
    return tuples;
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/** The four entries of block `number`'s tuple, starting at `offset` of `bytes`. */
function parseTuple(bytes: Uint8Array, offset: number, number: number): RawBlockTuple {
  const header = readEntryOf(bytes, offset, E2_TYPE.compressedHeader, `block ${number}'s CompressedHeader`);
  const body = readEntryOf(bytes, header.dataEnd, E2_TYPE.compressedBody, `block ${number}'s CompressedBody`);
  const receipts = readEntryOf(bytes, body.dataEnd, E2_TYPE.compressedReceipts, `block ${number}'s CompressedReceipts`);
  const difficulty = readEntryOf(bytes, receipts.dataEnd, E2_TYPE.totalDifficulty, `block ${number}'s TotalDifficulty`);
  if (difficulty.dataEnd - difficulty.dataStart !== 32) throw new Era1FormatError(`block ${number}'s TotalDifficulty entry does not hold 32 bytes`);
  return {
    number,
    header: bytes.subarray(header.dataStart, header.dataEnd),
    body: bytes.subarray(body.dataStart, body.dataEnd),
    receipts: bytes.subarray(receipts.dataStart, receipts.dataEnd),
    totalDifficulty: littleEndianUint(bytes.subarray(difficulty.dataStart, difficulty.dataEnd)),
  };
}

/** A 32-byte little-endian unsigned integer. */
function littleEndianUint(bytes: Uint8Array): bigint {
  const view = new DataView(bytes.buffer, bytes.byteOffset, 32);
  return view.getBigUint64(0, true) | (view.getBigUint64(8, true) << 64n) | (view.getBigUint64(16, true) << 128n) | (view.getBigUint64(24, true) << 192n);
}

async function readAt(handle: FileHandle, position: number, length: number): Promise<Uint8Array> {
  const buffer = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, position + done);
    if (bytesRead === 0) throw new Era1FormatError(`the file ends at byte ${position + done}, before the ${length} bytes expected at ${position}`);
    done += bytesRead;
  }
  return buffer;
}
