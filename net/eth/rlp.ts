/** RLP access for the formats in `net/eth`: decoding with errors that name the object and field that did not match. */
import { RLP } from '@ethereumjs/rlp';
import { RlpDecodeError } from './errors.js';
import { bytesToBigInt, bytesToHex, type Address, type Hex } from './hex.js';

export type RlpItem = Uint8Array | RlpList;
export interface RlpList extends Array<RlpItem> {}
/** What `encodeRlp` accepts: bytes, non-negative bigints (minimal big-endian), nested lists. */
export type RlpInput = Uint8Array | bigint | readonly RlpInput[];

/**
 * RLP-encodes `input` into one buffer, in two passes: the lengths of every list's payload first (pre-order), then
 * each item written in place. @ethereumjs/rlp's `encode` concatenates a new array at every level, which made it
 * the largest cost of converting JSON-RPC blocks to their RLP material (the history lane's profile); the output
 * is the same (test/net/eth/rlp-encode.test.ts compares them on random inputs).
 */
export function encodeRlp(input: RlpInput): Uint8Array {
  const payloads: number[] = [];
  const out = new Uint8Array(measure(input, payloads));
  const end = write(input, out, 0, payloads, { list: 0 });
  if (end !== out.length) throw new Error(`RLP encoding wrote ${end} of ${out.length} bytes`);
  return out;
}

/** Bytes of the length `n` in big-endian, without leading zeros. */
function lengthOfLength(n: number): number {
  let bytes = 0;
  for (let rest = n; rest > 0; rest = Math.floor(rest / 256)) bytes += 1;
  return bytes;
}

function prefixed(payload: number): number {
  return payload < 56 ? 1 + payload : 1 + lengthOfLength(payload) + payload;
}

function bigintHex(value: bigint): string {
  if (value < 0n) throw new RangeError('RLP encodes non-negative integers only');
  const hex = value.toString(16);
  return hex.length % 2 === 0 ? hex : `0${hex}`;
}

/** Encoded length of `input`; pushes each list's payload length (pre-order) onto `payloads`. */
function measure(input: RlpInput, payloads: number[]): number {
  if (input instanceof Uint8Array) return input.length === 1 && input[0]! < 0x80 ? 1 : prefixed(input.length);
  if (typeof input === 'bigint') {
    if (input < 0x80n) {
      if (input < 0n) throw new RangeError('RLP encodes non-negative integers only');
      return 1;
    }
    return prefixed(bigintHex(input).length / 2);
  }
  if (!Array.isArray(input)) throw new TypeError(`RLP encodes byte arrays, non-negative bigints and lists, not ${typeof input}`);
  const slot = payloads.length;
  payloads.push(0);
  let payload = 0;
  for (const item of input) payload += measure(item, payloads);
  payloads[slot] = payload;
  return prefixed(payload);
}

function writeHeader(out: Uint8Array, at: number, length: number, short: number, long: number): number {
  if (length < 56) {
    out[at] = short + length;
    return at + 1;
  }
  const bytes = lengthOfLength(length);
  out[at] = long + bytes;
  for (let i = bytes, rest = length; i >= 1; i -= 1, rest = Math.floor(rest / 256)) out[at + i] = rest % 256;
  return at + 1 + bytes;
}

function write(input: RlpInput, out: Uint8Array, at: number, payloads: readonly number[], cursor: { list: number }): number {
  if (input instanceof Uint8Array) {
    if (input.length === 1 && input[0]! < 0x80) {
      out[at] = input[0]!;
      return at + 1;
    }
    const start = writeHeader(out, at, input.length, 0x80, 0xb7);
    out.set(input, start);
    return start + input.length;
  }
  if (typeof input === 'bigint') {
    if (input === 0n) {
      out[at] = 0x80;
      return at + 1;
    }
    if (input < 0x80n) {
      out[at] = Number(input);
      return at + 1;
    }
    const hex = bigintHex(input);
    const start = writeHeader(out, at, hex.length / 2, 0x80, 0xb7);
    for (let i = 0; i < hex.length; i += 2) out[start + i / 2] = parseInt(hex.slice(i, i + 2), 16);
    return start + hex.length / 2;
  }
  const list = input as readonly RlpInput[];
  let next = writeHeader(out, at, payloads[cursor.list++]!, 0xc0, 0xf7);
  for (const item of list) next = write(item, out, next, payloads, cursor);
  return next;
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
