/**
 * Reads a chain file (`chain.rlp`: concatenated RLP blocks `[header, transactions, uncles, withdrawals?]`, as
 * written by geth `export`) in bounded chunks, so a file larger than memory can be imported. Yields each block
 * decoded, with its index and byte offset for error messages; a truncated or malformed block throws
 * `ChainFileError` naming the block and what failed.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { blockFromRlp, type Block } from '../../net/eth/block.js';
import { EthFormatError } from '../../net/eth/errors.js';
import { decodeRlp, rlpItemLength } from '../../net/eth/rlp.js';
import { ChainFileError } from './errors.js';

export interface ChainFileBlock {
  /** Position of the block in the file, from 0. */
  readonly index: number;
  /** Byte offset of the block in the file. */
  readonly offset: number;
  readonly block: Block;
  /** The block's RLP as the file holds it (a view, valid until the next block is read). */
  readonly bytes: Uint8Array;
}

/** The longest RLP prefix (1 byte + up to 8 length bytes). */
const MAX_PREFIX = 9;
const DEFAULT_CHUNK_BYTES = 4 * 1024 * 1024;

export function* readChainFile(path: string, chunkBytes = DEFAULT_CHUNK_BYTES): Generator<ChainFileBlock, void, undefined> {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    let buffer = Buffer.alloc(0);
    let bufferStart = 0;
    let offset = 0;
    let index = 0;
    const fill = (needed: number): void => {
      const have = bufferStart + buffer.length;
      if (offset + needed <= have || have >= size) return;
      const want = Math.max(needed - (have - offset), chunkBytes);
      const extra = Buffer.allocUnsafe(Math.min(want, size - have));
      let read = 0;
      while (read < extra.length) {
        const n = readSync(fd, extra, read, extra.length - read, have + read);
        if (n === 0) break;
        read += n;
      }
      buffer = Buffer.concat([buffer.subarray(offset - bufferStart), extra.subarray(0, read)]);
      bufferStart = offset;
    };
    while (offset < size) {
      const subject = `chain file block #${index} at byte ${offset}`;
      fill(MAX_PREFIX);
      let length: number;
      try {
        length = rlpItemLength(buffer, offset - bufferStart, subject);
      } catch (error) {
        throw new ChainFileError(index, offset, `not an RLP item (${(error as Error).message})`);
      }
      if (offset + length > size) throw new ChainFileError(index, offset, `truncated: the block needs ${length} bytes, the file has ${size - offset} left`);
      fill(length);
      const bytes = buffer.subarray(offset - bufferStart, offset - bufferStart + length);
      let block: Block;
      try {
        block = blockFromRlp(decodeRlp(bytes, subject));
      } catch (error) {
        if (!(error instanceof EthFormatError)) throw error;
        throw new ChainFileError(index, offset, `not a block: ${error.message}`);
      }
      yield { index, offset, block, bytes };
      offset += length;
      index += 1;
    }
  } finally {
    closeSync(fd);
  }
}
