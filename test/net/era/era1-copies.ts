/**
 * The Era1 fixture (`../shared/fixtures/era1/mainnet-00000-5ec1ffb8.era1`, read-only) and damaged copies of it made
 * in a temporary directory from its bytes: a byte flipped in place, or an entry's data replaced (the file rebuilt
 * around it, its block index recomputed). The entries are walked here on their own (8-byte headers: type, 4-byte
 * little-endian length, 2 reserved bytes), not with the reader under test.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES } from '../../support/paths.js';

export const ERA1_NAME = 'mainnet-00000-5ec1ffb8.era1';
export const ERA1_DIR = join(FIXTURES, 'era1');
export const ERA1_PATH = join(ERA1_DIR, ERA1_NAME);
export const GENESIS_HASH = '0xd4e56740f876aef8c010b86a40d5f56745a118d0906a34e69aec8c0db1cb8fa3';
export const EPOCH0_ROOT = '0x5ec1ffb8c3b146f42606c74ced973dc16ec5a107c0345858c343fc94780b4218';

export interface Entry {
  readonly type: number;
  readonly offset: number;
  readonly data: Buffer;
}

export const TYPE = { header: 0x0300, body: 0x0400, receipts: 0x0500, totalDifficulty: 0x0600, accumulator: 0x0700, index: 0x6632 } as const;

export function fixtureBytes(): Buffer {
  return readFileSync(ERA1_PATH);
}

export function entries(bytes: Buffer): Entry[] {
  const out: Entry[] = [];
  for (let at = 0; at < bytes.length;) {
    const type = bytes.readUInt16BE(at);
    const length = bytes.readUInt32LE(at + 2);
    out.push({ type, offset: at, data: bytes.subarray(at + 8, at + 8 + length) });
    at += 8 + length;
  }
  return out;
}

/** Block `number`'s entry of `type` (the fixture's tuples are in order: header, body, receipts, total difficulty). */
export function blockEntry(all: readonly Entry[], number: number, type: number): Entry {
  const found = all.filter((entry) => entry.type === type)[number];
  if (!found) throw new Error(`no entry of type ${type.toString(16)} for block ${number}`);
  return found;
}

/** The file rebuilt from `all` with `replace`'s entries' data swapped in, its block index recomputed. */
export function rebuilt(all: readonly Entry[], replace: ReadonlyMap<Entry, Uint8Array>): Buffer {
  const parts: Buffer[] = [];
  const headerOffsets: number[] = [];
  let at = 0;
  let startBlock = 0n;
  for (const entry of all) {
    if (entry.type === TYPE.index) {
      startBlock = entry.data.readBigInt64LE(0);
      const index = Buffer.alloc(8 + 16 + 8 * headerOffsets.length);
      index.writeUInt16BE(TYPE.index, 0);
      index.writeUInt32LE(16 + 8 * headerOffsets.length, 2);
      index.writeBigInt64LE(startBlock, 8);
      headerOffsets.forEach((offset, i) => index.writeBigInt64LE(BigInt(offset - at), 16 + 8 * i));
      index.writeBigInt64LE(BigInt(headerOffsets.length), 16 + 8 * headerOffsets.length);
      parts.push(index);
      continue;
    }
    const data = Buffer.from(replace.get(entry) ?? entry.data);
    const header = Buffer.alloc(8);
    header.writeUInt16BE(entry.type, 0);
    header.writeUInt32LE(data.length, 2);
    if (entry.type === TYPE.header) headerOffsets.push(at);
    parts.push(header, data);
    at += 8 + data.length;
  }
  return Buffer.concat(parts);
}

/** A temporary directory holding `bytes` as a file named `name`; `run` gets the directory. */
export async function inCopyDir<T>(bytes: Uint8Array, run: (dir: string) => Promise<T>, name = ERA1_NAME): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-era1-'));
  try {
    writeFileSync(join(dir, name), bytes);
    return await run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A copy of `bytes` with the byte at `offset` flipped (every bit). */
export function flipped(bytes: Buffer, offset: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[offset] = copy[offset]! ^ 0xff;
  return copy;
}
