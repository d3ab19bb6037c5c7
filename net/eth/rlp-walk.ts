/**
 * Walking RLP without decoding it: the position of each item inside the input, so callers can hash or re-frame
 * raw slices (a block's transactions, a receipt's logs) instead of building values and encoding them again.
 * Canonical form is enforced as @ethereumjs/rlp's decoder does (a single byte below 0x80 is never prefixed, the
 * long forms are used only above 55 bytes, lengths have no leading zero byte), so a slice is exactly the encoding
 * a decode-then-encode round trip would give.
 */
import { RlpDecodeError } from './errors.js';

/** One item: `offset` is its first byte (the prefix), `payload`…`end` its payload. */
export interface RlpSpan {
  readonly offset: number;
  readonly payload: number;
  readonly end: number;
  readonly list: boolean;
}

function readLength(bytes: Uint8Array, offset: number, width: number, subject: string): number {
  if (offset + width > bytes.length) throw new RlpDecodeError(subject, `truncated RLP length at offset ${offset}`);
  if (bytes[offset] === 0) throw new RlpDecodeError(subject, `non-canonical RLP length with a leading zero at offset ${offset}`);
  let length = 0;
  for (let i = 0; i < width; i++) length = length * 256 + bytes[offset + i]!;
  if (length <= 55) throw new RlpDecodeError(subject, `non-canonical RLP: long form for ${length} bytes at offset ${offset}`);
  return length;
}

/** A span to be overwritten in place by `readRlpSpan` (hot loops walk without allocating). */
export interface MutableRlpSpan {
  offset: number;
  payload: number;
  end: number;
  list: boolean;
}

export function emptySpan(): MutableRlpSpan {
  return { offset: 0, payload: 0, end: 0, list: false };
}

/** The item starting at `offset`, which must end at or before `limit`. */
export function rlpSpan(bytes: Uint8Array, offset: number, limit: number, subject: string): RlpSpan {
  return readRlpSpan(emptySpan(), bytes, offset, limit, subject);
}

/** `rlpSpan` written into `into`; returns it. */
export function readRlpSpan(into: MutableRlpSpan, bytes: Uint8Array, offset: number, limit: number, subject: string): MutableRlpSpan {
  if (offset >= limit) throw new RlpDecodeError(subject, `no RLP item at offset ${offset}`);
  const prefix = bytes[offset]!;
  let payload: number;
  let length: number;
  let list = false;
  if (prefix < 0x80) {
    payload = offset;
    length = 1;
  } else if (prefix < 0xb8) {
    payload = offset + 1;
    length = prefix - 0x80;
    if (length === 1 && payload < limit && bytes[payload]! < 0x80) {
      throw new RlpDecodeError(subject, `non-canonical RLP: a single byte below 0x80 is prefixed at offset ${offset}`);
    }
  } else if (prefix < 0xc0) {
    const width = prefix - 0xb7;
    length = readLength(bytes, offset + 1, width, subject);
    payload = offset + 1 + width;
  } else if (prefix < 0xf8) {
    payload = offset + 1;
    length = prefix - 0xc0;
    list = true;
  } else {
    const width = prefix - 0xf7;
    length = readLength(bytes, offset + 1, width, subject);
    payload = offset + 1 + width;
    list = true;
  }
  const end = payload + length;
  if (end > limit) throw new RlpDecodeError(subject, `RLP item at offset ${offset} runs past its enclosing item (${end} > ${limit})`);
  into.offset = offset;
  into.payload = payload;
  into.end = end;
  into.list = list;
  return into;
}

/** The item that must span all of `bytes`. */
export function rlpWhole(bytes: Uint8Array, subject: string): RlpSpan {
  const span = rlpSpan(bytes, 0, bytes.length, subject);
  if (span.end !== bytes.length) throw new RlpDecodeError(subject, `${bytes.length - span.end} bytes after the RLP item`);
  return span;
}

/** The children of a list item, in order. */
export function rlpChildren(bytes: Uint8Array, list: RlpSpan, subject: string): RlpSpan[] {
  if (!list.list) throw new RlpDecodeError(subject, 'expected an RLP list, got a byte string');
  const children: RlpSpan[] = [];
  for (let offset = list.payload; offset < list.end;) {
    const child = rlpSpan(bytes, offset, list.end, subject);
    children.push(child);
    offset = child.end;
  }
  return children;
}

/** The children of a list with exactly one of the allowed counts. */
export function rlpFields(bytes: Uint8Array, list: RlpSpan, subject: string, allowed: readonly number[]): RlpSpan[] {
  const children = rlpChildren(bytes, list, subject);
  if (!allowed.includes(children.length)) throw new RlpDecodeError(subject, `expected ${allowed.join(' or ')} fields, got ${children.length}`);
  return children;
}

/** Number of children of a list item, without collecting them. */
export function rlpCount(bytes: Uint8Array, list: RlpSpan, subject: string): number {
  if (!list.list) throw new RlpDecodeError(subject, 'expected an RLP list, got a byte string');
  let count = 0;
  for (let offset = list.payload; offset < list.end; count++) offset = rlpSpan(bytes, offset, list.end, subject).end;
  return count;
}

/** A canonical unsigned integer item of at most `maxBytes` bytes, as a JavaScript number when ≤ 6 bytes, else bigint. */
export function rlpUint(bytes: Uint8Array, span: RlpSpan, subject: string, field: string, maxBytes: number): bigint {
  if (span.list) throw new RlpDecodeError(subject, `field ${field}: expected a byte string, got a list`);
  const length = span.end - span.payload;
  if (length > maxBytes) throw new RlpDecodeError(subject, `field ${field}: integer wider than ${maxBytes} bytes`);
  if (length > 0 && bytes[span.payload] === 0) throw new RlpDecodeError(subject, `field ${field}: non-canonical integer with a leading zero byte`);
  let value = 0n;
  for (let i = span.payload; i < span.end; i++) value = (value << 8n) | BigInt(bytes[i]!);
  return value;
}

/** The payload length of a list prefix followed by its payload; `writeListPrefix` writes it. */
export function listPrefixLength(payloadLength: number): number {
  if (payloadLength <= 55) return 1;
  let width = 0;
  for (let rest = payloadLength; rest > 0; rest = Math.floor(rest / 256)) width += 1;
  return 1 + width;
}

/** Writes the RLP list prefix for `payloadLength` at `offset`; returns the offset after it. */
export function writeListPrefix(out: Uint8Array, offset: number, payloadLength: number): number {
  const size = listPrefixLength(payloadLength);
  if (size === 1) {
    out[offset] = 0xc0 + payloadLength;
    return offset + 1;
  }
  out[offset] = 0xf7 + size - 1;
  for (let i = size - 1, rest = payloadLength; i >= 1; i--, rest = Math.floor(rest / 256)) out[offset + i] = rest % 256;
  return offset + size;
}
