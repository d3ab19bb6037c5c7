/**
 * Snappy's framing format (google/snappy `framing_format.txt`), the `ssz_snappy` req/resp payload encoding of the
 * consensus p2p interface: a stream identifier chunk, then compressed (0x00) or uncompressed (0x01) chunks of at most
 * 65536 uncompressed bytes, each with the masked CRC-32C of its uncompressed bytes. Gossip messages use the raw block
 * format instead (net/p2p/snappy.ts).
 */
import { compress, uncompress } from '../../p2p/snappy.js';

const STREAM_IDENTIFIER = Uint8Array.of(0xff, 0x06, 0x00, 0x00, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59);
const MAX_CHUNK = 65536;

export class SnappyFrameError extends Error {
  override name = 'SnappyFrameError';
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32C (Castagnoli). */
export function crc32c(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = CRC_TABLE[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** The checksum a frame carries: the CRC rotated right by 15 bits plus a constant. */
export function maskedCrc(data: Uint8Array): number {
  const crc = crc32c(data);
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

/** `data` as a framed snappy stream. */
export function encodeFrames(data: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [STREAM_IDENTIFIER];
  for (let at = 0; at < data.length; at += MAX_CHUNK) {
    const chunk = data.subarray(at, at + MAX_CHUNK);
    const compressed = compress(chunk);
    const useCompressed = compressed.length < chunk.length;
    const body = useCompressed ? compressed : chunk;
    const header = new Uint8Array(8);
    const length = body.length + 4;
    header[0] = useCompressed ? 0x00 : 0x01;
    header[1] = length & 0xff;
    header[2] = (length >> 8) & 0xff;
    header[3] = (length >> 16) & 0xff;
    new DataView(header.buffer).setUint32(4, maskedCrc(chunk), true);
    parts.push(header, body);
  }
  return concat(parts);
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * Reads framed snappy from `input` at `offset` until exactly `length` uncompressed bytes are out (the frames of one
 * payload; what follows belongs to the next chunk). Throws on a bad checksum, an unknown unskippable chunk type, more
 * bytes than declared, or input that ends early.
 */
export function decodeFrames(input: Uint8Array, offset: number, length: number): { data: Uint8Array; next: number } {
  const out: Uint8Array[] = [];
  let have = 0;
  let at = offset;
  let identified = false;
  while (have < length || (length === 0 && !identified && at < input.length && input[at] === 0xff)) {
    if (at + 4 > input.length) throw new SnappyFrameError(`snappy frames end early: ${have} of ${length} bytes`);
    const type = input[at]!;
    const chunkLength = input[at + 1]! | (input[at + 2]! << 8) | (input[at + 3]! << 16);
    const bodyStart = at + 4;
    const bodyEnd = bodyStart + chunkLength;
    if (bodyEnd > input.length) throw new SnappyFrameError(`a snappy chunk of ${chunkLength} bytes ends past the input`);
    at = bodyEnd;
    if (type === 0xff) {
      if (chunkLength !== 6 || !STREAM_IDENTIFIER.subarray(4).every((b, i) => input[bodyStart + i] === b)) throw new SnappyFrameError('a malformed snappy stream identifier');
      identified = true;
      continue;
    }
    if (!identified) throw new SnappyFrameError('snappy frames without a stream identifier');
    if (type === 0x00 || type === 0x01) {
      if (chunkLength < 4) throw new SnappyFrameError('a snappy data chunk shorter than its checksum');
      const expected = new DataView(input.buffer, input.byteOffset + bodyStart, 4).getUint32(0, true);
      const body = input.subarray(bodyStart + 4, bodyEnd);
      let data: Uint8Array;
      try {
        data = type === 0x00 ? uncompress(body) : body;
      } catch (error) {
        throw new SnappyFrameError(`a snappy chunk does not decompress: ${(error as Error).message}`);
      }
      if (data.length > MAX_CHUNK) throw new SnappyFrameError(`a snappy chunk of ${data.length} uncompressed bytes (at most ${MAX_CHUNK})`);
      if (maskedCrc(data) !== expected) throw new SnappyFrameError('a snappy chunk fails its CRC-32C checksum');
      have += data.length;
      if (have > length) throw new SnappyFrameError(`snappy frames hold more than the ${length} bytes declared`);
      out.push(data);
      continue;
    }
    if (type >= 0x02 && type <= 0x7f) throw new SnappyFrameError(`an unskippable snappy chunk type 0x${type.toString(16)}`);
    // 0x80-0xfe: padding and skippable chunks.
  }
  return { data: concat(out), next: at };
}
