/**
 * RLP written back to front: an item's payload is written before its prefix, so a list's length is known when its
 * prefix is written, in one pass over the input with nothing measured first (net/rpc/json-rlp.ts writes upstream
 * JSON with it). Hex is decoded by Node's native decoder straight into the buffer.
 */
/** A field the direct writer refuses (the object path then names the error); `field` is for diagnostics only. */
export class JsonRlpReject extends Error {
  override name = 'JsonRlpReject';
  constructor(readonly field: string) {
    super(`direct JSON → RLP writer refused field ${field}`);
  }
}

/** Hex digit values by char code (-1: not a hex digit); codes ≥ 128 are never digits. */
const NIBBLE = new Int8Array(128).fill(-1);
for (let c = 0; c < 10; c += 1) NIBBLE[48 + c] = c;
for (let c = 0; c < 6; c += 1) {
  NIBBLE[97 + c] = 10 + c;
  NIBBLE[65 + c] = 10 + c;
}

/** The value of the hex digit at `at` in `text`, or -1. */
export function nibble(text: string, at: number): number {
  const code = text.charCodeAt(at);
  return code < 128 ? NIBBLE[code]! : -1;
}

/** RLP written from the end of a buffer towards its start; positions are kept as bytes written, so growing is safe. */
export class BackWriter {
  private buf: Buffer;
  private pos: number;

  constructor(capacity: number) {
    this.buf = Buffer.allocUnsafeSlow(Math.max(1024, capacity));
    this.pos = this.buf.length;
  }

  /** Bytes written so far (a mark: an item's length is the difference of two marks). */
  get written(): number {
    return this.buf.length - this.pos;
  }

  /** The bytes between two marks (`from` ≤ `to`), a view of the current buffer. */
  view(from: number, to: number): Buffer {
    const end = this.buf.length;
    return this.buf.subarray(end - to, end - from);
  }

  room(bytes: number): void {
    if (this.pos >= bytes) return;
    const used = this.written;
    const size = Math.max(this.buf.length * 2, used + bytes + 1024);
    const next = Buffer.allocUnsafeSlow(size);
    this.buf.copy(next, size - used, this.pos);
    this.buf = next;
    this.pos = size - used;
  }

  byte(value: number): void {
    if (this.pos === 0) this.room(1);
    this.buf[--this.pos] = value;
  }

  /** The prefix of an item whose payload (already written) is `length` bytes: `short` 0x80 for strings, 0xc0 for lists. */
  prefix(length: number, short: number): void {
    this.room(9);
    if (length < 56) {
      this.buf[--this.pos] = short + length;
      return;
    }
    let bytes = 0;
    for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) {
      this.buf[--this.pos] = rest % 256;
      bytes += 1;
    }
    this.buf[--this.pos] = short + 55 + bytes;
  }

  /** Closes a list opened at mark `start`. */
  list(start: number): void {
    this.prefix(this.written - start, 0xc0);
  }

  /** `bytes` bytes decoded from `text`'s hex after its `0x`; false when a digit is not hex. */
  hex(text: string, bytes: number): boolean {
    if (bytes === 0) return true;
    this.room(bytes);
    this.pos -= bytes;
    return this.buf.write(text.slice(2), this.pos, bytes, 'hex') === bytes;
  }

  /** One RLP string item of `0x`-hex data (any length). */
  dataItem(value: unknown, field: string): void {
    if (typeof value !== 'string' || value.length % 2 !== 0 || value.charCodeAt(0) !== 48 || value.charCodeAt(1) !== 120) throw new JsonRlpReject(field);
    const bytes = (value.length - 2) / 2;
    if (!this.hex(value, bytes)) throw new JsonRlpReject(field);
    if (bytes === 1 && this.buf[this.pos]! < 0x80) return;
    this.prefix(bytes, 0x80);
  }

  /** Exactly `bytes` bytes of hex, with no prefix (the block hash part). */
  fixedRaw(value: unknown, bytes: number, field: string): void {
    if (typeof value !== 'string' || value.length !== 2 + 2 * bytes || value.charCodeAt(0) !== 48 || value.charCodeAt(1) !== 120) throw new JsonRlpReject(field);
    if (!this.hex(value, bytes)) throw new JsonRlpReject(field);
  }

  /** One RLP string item of exactly `bytes` (> 1) bytes: hashes, addresses, blooms, nonces. */
  fixedItem(value: unknown, bytes: number, field: string): void {
    this.fixedRaw(value, bytes, field);
    this.prefix(bytes, 0x80);
  }

  /**
   * One RLP integer item from a JSON quantity (`0x` and at least one hex digit; leading zeros allowed, dropped in
   * the encoding), at most `maxNibbles` significant hex digits (the encoder's bit width / 4; Infinity: unbounded).
   */
  quantityItem(value: unknown, maxNibbles: number, field: string): void {
    if (typeof value !== 'string') throw new JsonRlpReject(field);
    const length = value.length;
    if (length < 3 || value.charCodeAt(0) !== 48 || value.charCodeAt(1) !== 120) throw new JsonRlpReject(field);
    let start = 2;
    while (start < length && value.charCodeAt(start) === 48) start += 1;
    const nibbles = length - start;
    if (nibbles > maxNibbles) throw new JsonRlpReject(field);
    if (nibbles === 0) {
      this.byte(0x80);
      return;
    }
    const bytes = (nibbles + 1) >> 1;
    this.room(bytes + 9);
    for (let at = length - 1, i = 0; i < bytes; i += 1) {
      const lo = nibble(value, at);
      const hi = at - 1 >= start ? nibble(value, at - 1) : 0;
      if (lo < 0 || hi < 0) throw new JsonRlpReject(field);
      this.buf[--this.pos] = (hi << 4) | lo;
      at -= 2;
    }
    if (bytes === 1 && this.buf[this.pos]! < 0x80) return;
    this.prefix(bytes, 0x80);
  }

  /** The bytes written, as one new buffer of their own (its own ArrayBuffer, so it can move between threads). */
  take(): Uint8Array {
    const out = new Uint8Array(this.written);
    out.set(this.buf.subarray(this.pos));
    return out;
  }
}

