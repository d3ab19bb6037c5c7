/**
 * The ingest bench's chain file: a pre-generated chain as a flat sequence of length-prefixed records, read back as
 * a stream so memory does not depend on the length of the chain.
 *
 *   file    = "CDNCHAIN" (8 ASCII bytes) · version (u32 BE, = 1) · record*
 *   record  = blockLength (u32 BE) · block · receiptsLength (u32 BE) · receipts
 *   block   = rlp([header, transactions, uncles, withdrawals])      (net/eth encodeBlock)
 *   receipts = rlp([[type, status, cumulativeGasUsed, logs], …])    (net/eth encodeEth69Receipts)
 *
 * A file is written under a temporary name and renamed when complete, so a file with the final name is whole.
 */
import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

export interface ChainRecord {
  block: Uint8Array;
  receipts: Uint8Array;
}

const MAGIC = Buffer.from('CDNCHAIN', 'ascii');
const VERSION = 1;
const READ_CHUNK_BYTES = 1 << 20;

export class ChainFileFormatError extends Error {
  override readonly name = 'ChainFileFormatError';
  constructor(path: string, detail: string) {
    super(`${path}: ${detail}; delete it and the bench regenerates it`);
  }
}

function u32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value);
  return out;
}

export interface ChainFileWriter {
  append(record: ChainRecord): void;
  /** Renames the finished file to its final path. */
  finish(): void;
  /** Stops and removes the temporary file. */
  abandon(): void;
}

export function createChainFileWriter(path: string, temporaryPath: string): ChainFileWriter {
  const fd = openSync(temporaryPath, 'w');
  writeSync(fd, Buffer.concat([MAGIC, u32(VERSION)]));
  let open = true;
  const close = () => {
    if (open) closeSync(fd);
    open = false;
  };
  return {
    append({ block, receipts }) {
      writeSync(fd, u32(block.length));
      writeSync(fd, block);
      writeSync(fd, u32(receipts.length));
      writeSync(fd, receipts);
    },
    finish() {
      close();
      renameSync(temporaryPath, path);
    },
    abandon() {
      close();
      rmSync(temporaryPath, { force: true });
    },
  };
}

/** Sequential reads through a fixed-size chunk: each `take` returns a fresh copy, so chunks are never retained. */
class ChunkedFile {
  private chunk = Buffer.alloc(0);
  private offset = 0;
  private position = 0;

  constructor(private readonly file: FileHandle, private readonly path: string) {}

  /** Exactly `length` bytes, or null at a clean end of file. */
  async take(length: number): Promise<Uint8Array | null> {
    const out = new Uint8Array(length);
    let filled = 0;
    while (filled < length) {
      if (this.offset === this.chunk.length && !(await this.refill())) {
        if (filled === 0) return null;
        throw new ChainFileFormatError(this.path, `truncated at byte ${this.position}`);
      }
      const count = Math.min(length - filled, this.chunk.length - this.offset);
      out.set(this.chunk.subarray(this.offset, this.offset + count), filled);
      filled += count;
      this.offset += count;
    }
    return out;
  }

  private async refill(): Promise<boolean> {
    const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
    const { bytesRead } = await this.file.read(buffer, 0, READ_CHUNK_BYTES, this.position);
    this.position += bytesRead;
    this.chunk = buffer.subarray(0, bytesRead);
    this.offset = 0;
    return bytesRead > 0;
  }
}

async function takeLength(reader: ChunkedFile, path: string, what: string): Promise<number | null> {
  const bytes = await reader.take(4);
  if (bytes === null) return null;
  const length = Buffer.from(bytes.buffer, bytes.byteOffset, 4).readUInt32BE();
  if (length === 0) throw new ChainFileFormatError(path, `empty ${what}`);
  return length;
}

/** The records of a chain file in order, one at a time. */
export async function* readChainFile(path: string): AsyncGenerator<ChainRecord> {
  const file = await open(path, 'r');
  try {
    const reader = new ChunkedFile(file, path);
    const head = await reader.take(MAGIC.length + 4);
    if (head === null || !MAGIC.equals(head.subarray(0, MAGIC.length))) throw new ChainFileFormatError(path, 'not a chain file');
    const version = Buffer.from(head).readUInt32BE(MAGIC.length);
    if (version !== VERSION) throw new ChainFileFormatError(path, `format version ${version}, expected ${VERSION}`);
    for (;;) {
      const blockLength = await takeLength(reader, path, 'block');
      if (blockLength === null) return;
      const block = await reader.take(blockLength);
      const receiptsLength = await takeLength(reader, path, 'receipts');
      const receipts = receiptsLength === null ? null : await reader.take(receiptsLength);
      if (block === null || receipts === null) throw new ChainFileFormatError(path, 'truncated record');
      yield { block, receipts };
    }
  } finally {
    await file.close();
  }
}
