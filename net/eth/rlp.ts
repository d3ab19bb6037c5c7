/** RLP access for the formats in `net/eth`: decoding with errors that name the object and field that did not match. */
import { RLP } from '@ethereumjs/rlp';
import { RlpDecodeError } from './errors.js';
import { bytesToBigInt, bytesToHex, type Address, type Hex } from './hex.js';

export type RlpItem = Uint8Array | RlpList;
export interface RlpList extends Array<RlpItem> {}
/** What `encodeRlp` accepts: bytes, non-negative bigints (minimal big-endian), nested lists. */
export type RlpInput = Uint8Array | bigint | readonly RlpInput[];

export function encodeRlp(input: RlpInput): Uint8Array {
  return RLP.encode(input as Parameters<typeof RLP.encode>[0]);
}

/** Decodes exactly one RLP item spanning all of `bytes`. */
export function decodeRlp(bytes: Uint8Array, subject: string): RlpItem {
  try {
    return RLP.decode(bytes) as RlpItem;
  } catch (error) {
    throw new RlpDecodeError(subject, `malformed RLP (${(error as Error).message})`);
  }
}

/** Decodes one RLP list and checks its item count against the allowed counts. */
export function decodeRlpList(bytes: Uint8Array, subject: string, allowedLengths?: readonly number[]): RlpList {
  const item = decodeRlp(bytes, subject);
  if (!Array.isArray(item)) throw new RlpDecodeError(subject, 'expected an RLP list, got a byte string');
  if (allowedLengths && !allowedLengths.includes(item.length)) {
    throw new RlpDecodeError(subject, `expected ${allowedLengths.join(' or ')} fields, got ${item.length}`);
  }
  return item;
}

/** Total length (prefix + payload) of the RLP item starting at `offset`. */
export function rlpItemLength(bytes: Uint8Array, offset: number, subject: string): number {
  const prefix = bytes[offset];
  if (prefix === undefined) throw new RlpDecodeError(subject, `no RLP item at offset ${offset}`);
  if (prefix < 0x80) return 1;
  if (prefix < 0xb8) return 1 + prefix - 0x80;
  if (prefix < 0xc0) return 1 + (prefix - 0xb7) + readLength(bytes, offset + 1, prefix - 0xb7, subject);
  if (prefix < 0xf8) return 1 + prefix - 0xc0;
  return 1 + (prefix - 0xf7) + readLength(bytes, offset + 1, prefix - 0xf7, subject);
}

function readLength(bytes: Uint8Array, offset: number, width: number, subject: string): number {
  if (offset + width > bytes.length) throw new RlpDecodeError(subject, `truncated RLP length at offset ${offset}`);
  let length = 0;
  for (let i = 0; i < width; i++) length = length * 256 + bytes[offset + i]!;
  return length;
}

/** Typed, named access to the items of one decoded RLP list. */
export class RlpFields {
  constructor(
    readonly items: readonly RlpItem[],
    private readonly subject: string,
    private readonly names: readonly string[],
  ) {}

  private fail(index: number, detail: string): never {
    throw new RlpDecodeError(this.subject, `field ${this.names[index] ?? `#${index}`}: ${detail}`);
  }

  bytes(index: number): Uint8Array {
    const item = this.items[index];
    if (item === undefined) this.fail(index, 'missing');
    if (Array.isArray(item)) this.fail(index, 'expected a byte string, got a list');
    return item;
  }

  list(index: number): RlpList {
    const item = this.items[index];
    if (item === undefined) this.fail(index, 'missing');
    if (!Array.isArray(item)) this.fail(index, 'expected a list, got a byte string');
    return item;
  }

  hex(index: number): Hex {
    return bytesToHex(this.bytes(index));
  }

  /** Exactly `length` bytes (hashes, blooms, nonces). */
  fixed(index: number, length: number): Hex {
    const bytes = this.bytes(index);
    if (bytes.length !== length) this.fail(index, `expected ${length} bytes, got ${bytes.length}`);
    return bytesToHex(bytes);
  }

  address(index: number): Address {
    return this.fixed(index, 20);
  }

  /** A recipient: 20 bytes, or empty for contract creation. */
  optionalAddress(index: number): Address | null {
    return this.bytes(index).length === 0 ? null : this.address(index);
  }

  /** A canonical unsigned integer (no leading zero bytes), at most `maxBytes` wide. */
  quantity(index: number, maxBytes = 32): bigint {
    const bytes = this.bytes(index);
    if (bytes.length > maxBytes) this.fail(index, `integer wider than ${maxBytes} bytes`);
    if (bytes[0] === 0) this.fail(index, 'non-canonical integer with a leading zero byte');
    return bytesToBigInt(bytes);
  }

  /** A canonical integer that fits a JavaScript number exactly. */
  number(index: number): number {
    const value = this.quantity(index, 8);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) this.fail(index, `${value} exceeds Number.MAX_SAFE_INTEGER`);
    return Number(value);
  }

  /** A signature parity or status bit: 0 or 1. */
  bit(index: number): 0 | 1 {
    const value = this.quantity(index, 1);
    if (value > 1n) this.fail(index, `expected 0 or 1, got ${value}`);
    return value === 1n ? 1 : 0;
  }
}
