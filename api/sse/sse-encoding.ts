/**
 * Content coding of an SSE response: `identity` (the frames as they are) or `gzip`, chosen from the
 * request's `Accept-Encoding` (`negotiateEncoding`). A client that sends no `Accept-Encoding`, or one
 * that does not accept gzip, gets the plain bytes, unchanged.
 *
 * A gzip stream is ONE gzip member (RFC 1952) for the life of the response: a 10-byte header, then
 * deflate blocks, and — when the server ends the stream — a final empty block and the trailer (CRC-32
 * and length of everything sent). What makes compression cheap under fan-out: each chunk of frames
 * (a block's burst of changes, a heartbeat, a reset) is deflated ONCE by a fresh compressor with no
 * history, ending in a sync flush (no BFINAL bit, byte-aligned, every byte of input decodable from
 * the output alone). Such segments concatenate into a valid deflate stream in any order — a
 * back-reference never reaches outside its own segment — so every gzip stream that receives the same
 * burst is handed the same shared Buffer, and its client decodes each event as soon as that segment
 * arrives (the sync flush leaves nothing held in the server's compressor). What differs per stream is
 * only the trailer's CRC-32 and length, kept per stream by combining the segments' own CRCs (the
 * zlib `crc32_combine_op` algebra: 32 shift/xor steps per chunk, no pass over the bytes).
 *
 * One gzip member rather than a member per chunk because browsers stop at the end of the first
 * member: Chromium 150's EventSource, sent concatenated members, dispatched the first member's event
 * and silently dropped the rest (undici's fetch decoded all of them). One member with sync-flushed
 * blocks is what every gzip decoder streams.
 */
import { constants, crc32, deflateRawSync } from 'node:zlib';

export type SseEncoding = 'identity' | 'gzip';

/** Compression level of a shared segment: deflated once per burst, so the default level's ratio is worth its ~1 ms. */
const LEVEL = 6;

/**
 * `gzip` when `Accept-Encoding` accepts it (`gzip` or `x-gzip` with a non-zero q, or `*` with a
 * non-zero q where gzip is not named), else `identity`.
 */
export function negotiateEncoding(acceptEncoding: string): SseEncoding {
  if (acceptEncoding === '') return 'identity';
  let star: boolean | null = null;
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.split(';');
    const coding = name!.trim().toLowerCase();
    let q = 1;
    for (const param of params) {
      const [key, value] = param.split('=');
      if (key!.trim().toLowerCase() === 'q') q = Number(value?.trim());
    }
    const accepted = Number.isFinite(q) && q > 0;
    if (coding === 'gzip' || coding === 'x-gzip') return accepted ? 'gzip' : 'identity';
    if (coding === '*') star = accepted;
  }
  return star === true ? 'gzip' : 'identity';
}

/** A chunk deflated for gzip streams: the bytes, the CRC-32 and length of its plain bytes, and the CRC shift for that length. */
interface Deflated {
  readonly bytes: Buffer;
  readonly crc: number;
  readonly size: number;
  /** x^(8·size) mod the CRC polynomial: what moves a CRC over `size` more bytes (`crc32_combine_gen`). */
  readonly shift: number;
}

/**
 * Frames written to one or many streams: the plain bytes, and their deflate segment made on first
 * use and then shared by every gzip stream the chunk is written to.
 */
export class SseChunk {
  private segment: Deflated | undefined;

  constructor(readonly plain: Buffer) {}

  deflated(): Deflated {
    if (!this.segment) {
      const bytes = deflateRawSync(this.plain, { level: LEVEL, finishFlush: constants.Z_SYNC_FLUSH });
      this.segment = { bytes, crc: crc32(this.plain), size: this.plain.length, shift: crcShift(this.plain.length) };
    }
    return this.segment;
  }
}

/** What one response writes: `encode` each chunk in order, `finish` once at its end. */
export interface StreamEncoder {
  readonly encoding: SseEncoding;
  /** The bytes that open the body (the gzip header; nothing for identity). */
  start(): Buffer;
  encode(chunk: SseChunk): Buffer;
  /** The bytes that close the body (final block and trailer for gzip; nothing for identity). */
  finish(): Buffer;
}

const NOTHING = Buffer.alloc(0);

const IDENTITY: StreamEncoder = {
  encoding: 'identity',
  start: () => NOTHING,
  encode: (chunk) => chunk.plain,
  finish: () => NOTHING,
};

/** Header: magic, deflate, no flags, no mtime, no extra flags, OS unknown. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff]);
/** A final fixed-Huffman block holding only its end-of-block code. */
const FINAL_BLOCK = Buffer.from([0x03, 0x00]);

class GzipEncoder implements StreamEncoder {
  readonly encoding = 'gzip' as const;
  private crc = 0;
  /** Plain bytes so far, modulo 2^32 (the trailer's ISIZE). */
  private size = 0;
  private finished = false;

  start(): Buffer {
    return GZIP_HEADER;
  }

  encode(chunk: SseChunk): Buffer {
    const segment = chunk.deflated();
    this.crc = (multModP(segment.shift, this.crc) ^ segment.crc) >>> 0;
    this.size = (this.size + segment.size) >>> 0;
    return segment.bytes;
  }

  finish(): Buffer {
    if (this.finished) return NOTHING;
    this.finished = true;
    const trailer = Buffer.alloc(10);
    FINAL_BLOCK.copy(trailer, 0);
    trailer.writeUInt32LE(this.crc, 2);
    trailer.writeUInt32LE(this.size, 6);
    return trailer;
  }
}

export function streamEncoder(encoding: SseEncoding): StreamEncoder {
  return encoding === 'gzip' ? new GzipEncoder() : IDENTITY;
}

// CRC-32 combination (zlib's crc32.c, the "multmodp" formulation): polynomials over GF(2), reflected.
const POLY = 0xedb88320;

/** a·b modulo the CRC polynomial. */
function multModP(a: number, b: number): number {
  if (a === 0) return 0;
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return p >>> 0;
}

/** X2N[k] = x^(2^k) modulo the polynomial. */
const X2N: number[] = (() => {
  const table = [0x40000000];
  for (let k = 1; k < 32; k += 1) table.push(multModP(table[k - 1]!, table[k - 1]!));
  return table;
})();

/** x^(8·bytes) modulo the polynomial (`crc32_combine_gen`). */
export function crcShift(bytes: number): number {
  let p = 0x80000000;
  let k = 3;
  for (let n = bytes; n > 0; n = Math.floor(n / 2), k += 1) {
    if (n % 2 === 1) p = multModP(X2N[k & 31]!, p);
  }
  return p;
}

/** CRC-32 of a‖b from the CRCs of a and b and b's length (`crc32_combine`). */
export function combineCrc(crcA: number, crcB: number, lengthB: number): number {
  return (multModP(crcShift(lengthB), crcA) ^ crcB) >>> 0;
}
