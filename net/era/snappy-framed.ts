/**
 * A whole snappy framed stream (google/snappy `framing_format.txt`) → its bytes: how Era1 stores each header, body
 * and receipt list (`snappyFramed(rlp(…))`). Unlike the consensus req/resp payloads (net/beacon/p2p/snappy-frames.ts,
 * whose length is declared up front) an Era1 entry's stream simply ends with the entry, so every chunk up to the
 * end is read. Each data chunk's masked CRC-32C of its uncompressed bytes is checked: a flipped byte anywhere in
 * the entry fails here.
 */
import { maskedCrc } from '../beacon/p2p/snappy-frames.js';
import { uncompressFast } from '../p2p/snappy.js';
import { Era1FormatError } from './errors.js';

const STREAM_IDENTIFIER = Uint8Array.of(0xff, 0x06, 0x00, 0x00, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59);
const MAX_CHUNK = 65536;

/** The uncompressed bytes of the framed stream `input[start, end)`; throws Era1FormatError saying what is wrong. */
export function decodeSnappyFramed(input: Uint8Array, start = 0, end = input.length): Uint8Array {
  if (end - start < STREAM_IDENTIFIER.length || !STREAM_IDENTIFIER.every((b, i) => input[start + i] === b)) {
    throw new Era1FormatError('snappy framed data does not start with the stream identifier');
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  let at = start + STREAM_IDENTIFIER.length;
  while (at < end) {
    if (at + 4 > end) throw new Era1FormatError('a snappy chunk header runs past the end of the entry');
    const type = input[at]!;
    const length = input[at + 1]! | (input[at + 2]! << 8) | (input[at + 3]! << 16);
    const bodyStart = at + 4;
    const bodyEnd = bodyStart + length;
    if (bodyEnd > end) throw new Era1FormatError(`a snappy chunk of ${length} bytes runs past the end of the entry`);
    at = bodyEnd;
    if (type === 0x00 || type === 0x01) {
      if (length < 4) throw new Era1FormatError('a snappy data chunk is shorter than its checksum');
      const expected = (input[bodyStart]! | (input[bodyStart + 1]! << 8) | (input[bodyStart + 2]! << 16)) + input[bodyStart + 3]! * 0x1000000;
      const body = input.subarray(bodyStart + 4, bodyEnd);
      let data: Uint8Array;
      try {
        // An uncompressed chunk is copied: a view would keep the whole read (many blocks' entries) alive.
        data = type === 0x00 ? uncompressFast(body) : body.slice();
      } catch (error) {
        throw new Era1FormatError(`a snappy chunk does not decompress (${(error as Error).message})`);
      }
      if (data.length > MAX_CHUNK) throw new Era1FormatError(`a snappy chunk holds ${data.length} uncompressed bytes (at most ${MAX_CHUNK})`);
      if (maskedCrc(data) !== expected) throw new Era1FormatError('a snappy chunk fails its CRC-32C checksum');
      chunks.push(data);
      total += data.length;
      continue;
    }
    if (type === 0xff) {
      if (length !== 6 || !STREAM_IDENTIFIER.subarray(4).every((b, i) => input[bodyStart + i] === b)) throw new Era1FormatError('a malformed snappy stream identifier');
      continue;
    }
    if (type >= 0x02 && type <= 0x7f) throw new Era1FormatError(`an unskippable snappy chunk type 0x${type.toString(16)}`);
    // 0x80-0xfe: padding and skippable chunks.
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}
