/**
 * e2store, the container Era1 files are made of (status-im/nimbus-eth2 `docs/e2store.md`; eth-clients/e2store-format-specs):
 * a sequence of entries, each an 8-byte header — type (2 bytes, as written: `e2` is 0x65 0x32), data length (4 bytes
 * little-endian), reserved (2 bytes, zero) — followed by its data. The entry types Era1 uses are below.
 */
import { Era1FormatError } from './errors.js';

export const ENTRY_HEADER_BYTES = 8;

/** Entry types of Era1 files (eth-clients/e2store-format-specs `types/`), as the 2 bytes read big-endian. */
export const E2_TYPE = {
  version: 0x6532,
  compressedHeader: 0x0300,
  compressedBody: 0x0400,
  compressedReceipts: 0x0500,
  totalDifficulty: 0x0600,
  accumulator: 0x0700,
  blockIndex: 0x6632,
} as const;

export interface E2Entry {
  readonly type: number;
  /** Where the entry's header starts, relative to the bytes it was read from. */
  readonly offset: number;
  /** Where its data starts and ends. */
  readonly dataStart: number;
  readonly dataEnd: number;
}

/** The entry whose header starts at `offset` of `bytes` (its data must lie within `bytes`). */
export function readEntry(bytes: Uint8Array, offset: number): E2Entry {
  if (offset + ENTRY_HEADER_BYTES > bytes.length) throw new Era1FormatError(`an e2store entry header at byte ${offset} runs past the end (${bytes.length} bytes)`);
  const type = (bytes[offset]! << 8) | bytes[offset + 1]!;
  const length = (bytes[offset + 2]! | (bytes[offset + 3]! << 8) | (bytes[offset + 4]! << 16)) + bytes[offset + 5]! * 0x1000000;
  if (bytes[offset + 6] !== 0 || bytes[offset + 7] !== 0) throw new Era1FormatError(`the e2store entry at byte ${offset} has non-zero reserved bytes`);
  const dataStart = offset + ENTRY_HEADER_BYTES;
  const dataEnd = dataStart + length;
  if (dataEnd > bytes.length) throw new Era1FormatError(`the e2store entry at byte ${offset} (type 0x${hex4(type)}) declares ${length} bytes, past the end`);
  return { type, offset, dataStart, dataEnd };
}

/** `readEntry`, also requiring the entry's type. */
export function readEntryOf(bytes: Uint8Array, offset: number, type: number, what: string): E2Entry {
  const entry = readEntry(bytes, offset);
  if (entry.type !== type) throw new Era1FormatError(`expected ${what} (type 0x${hex4(type)}) at byte ${offset}, found type 0x${hex4(entry.type)}`);
  return entry;
}

export function hex4(type: number): string {
  return type.toString(16).padStart(4, '0');
}
