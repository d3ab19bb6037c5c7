/** The SSE content codings: negotiation, and gzip streams built from shared, self-contained deflate segments. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { constants, crc32, gunzipSync, inflateRawSync } from 'node:zlib';
import { combineCrc, negotiateEncoding, SseChunk, streamEncoder } from '../../../api/sse/sse-encoding.js';
import { HEARTBEAT, HEARTBEAT_FRAME } from '../../../api/sse/sse-frames.js';
import { sseFrame } from '../../../store/change-log.js';
import { decodeChangeValue, encodeChangeValue } from '../../../store/change-log.js';
import { encodeCursor } from '../../../store/cursor.js';

test('Accept-Encoding negotiation: gzip only where the client accepts it', () => {
  const cases: Array<[string, string]> = [
    ['', 'identity'],
    ['gzip', 'gzip'],
    ['gzip, deflate, br', 'gzip'],
    ['br;q=1.0, GZIP;q=0.5', 'gzip'],
    ['x-gzip', 'gzip'],
    ['gzip;q=0', 'identity'],
    ['gzip; q=0.000', 'identity'],
    ['deflate, br', 'identity'],
    ['identity', 'identity'],
    ['*', 'gzip'],
    ['*;q=0', 'identity'],
    ['gzip;q=0, *', 'identity'],
    ['br, *;q=0.1', 'gzip'],
  ];
  for (const [header, expected] of cases) assert.equal(negotiateEncoding(header), expected, JSON.stringify(header));
});

/** A block's burst of `count` change frames, as the fan-out renders it. */
function burst(block: number, count: number): Buffer {
  const frames: Buffer[] = [];
  for (let i = 0; i < count; i += 1) {
    const sequence = BigInt(block * 1000 + i);
    const cursor = encodeCursor({ epoch: 1n, chainId: 1, instance: 'erc20@1', sequence, block: { number: block, hash: `0x${block.toString(16).padStart(64, '0')}` } });
    const json = JSON.stringify({ sequence: String(sequence), holder: `0x${randomBytes(20).toString('hex')}`, balance: BigInt(`0x${randomBytes(12).toString('hex')}`).toString() });
    frames.push(sseFrame(decodeChangeValue(sequence, encodeChangeValue('apply', cursor, json))));
  }
  return Buffer.concat(frames);
}

test("a block's shared segment decodes, on its own and with nothing after it, to exactly the plain frames", () => {
  const plain = burst(7, 120);
  const chunk = new SseChunk(plain);
  const segment = chunk.deflated().bytes;
  assert.ok(segment.length < plain.length / 2, `compressed ${plain.length} → ${segment.length} bytes`);
  assert.deepEqual(segment.subarray(-4), Buffer.from([0x00, 0x00, 0xff, 0xff]), 'ends with a sync flush (an empty stored block)');
  assert.equal(segment[0]! & 1, 0, 'its first block is not final');
  // No history needed before it, and nothing after it: every byte is out once the segment is in.
  assert.deepEqual(inflateRawSync(segment, { finishFlush: constants.Z_SYNC_FLUSH }), plain);
  assert.equal(chunk.deflated().bytes, segment, 'deflated once, then the same Buffer');
});

test('gzip streams that joined at different times share each burst Buffer and decode to exactly the identity bytes', () => {
  const hello = (n: number) => new SseChunk(Buffer.from(`event: hello\ndata: {"stream":${n}}\n\n`));
  const blocks = [burst(1, 90), burst(2, 110), burst(3, 1)].map((plain) => new SseChunk(plain));
  const early = streamEncoder('gzip');
  const late = streamEncoder('gzip');
  const identity = streamEncoder('identity');
  const earlyParts = [early.start(), early.encode(hello(1)), early.encode(blocks[0]!), early.encode(HEARTBEAT)];
  const lateParts = [late.start(), late.encode(hello(2))];
  const plainParts = [identity.start(), identity.encode(hello(3))];
  for (const block of blocks.slice(1)) {
    const [a, b, c] = [early.encode(block), late.encode(block), identity.encode(block)];
    assert.equal(a, b, 'every gzip stream is handed the same Buffer for a burst');
    assert.equal(c, block.plain, 'an identity stream is handed the plain Buffer itself');
    earlyParts.push(a);
    lateParts.push(b);
    plainParts.push(c);
  }
  assert.equal(identity.finish().length, 0);
  const earlyGzip = Buffer.concat([...earlyParts, early.finish()]);
  const lateGzip = Buffer.concat([...lateParts, late.finish()]);
  assert.deepEqual(gunzipSync(earlyGzip), Buffer.concat([hello(1).plain, blocks[0]!.plain, HEARTBEAT_FRAME, blocks[1]!.plain, blocks[2]!.plain]), 'one valid member: CRC and length check out');
  assert.deepEqual(gunzipSync(lateGzip), Buffer.concat([hello(2).plain, blocks[1]!.plain, blocks[2]!.plain]));
  assert.deepEqual(Buffer.concat(plainParts), Buffer.concat([hello(3).plain, blocks[1]!.plain, blocks[2]!.plain]));
  // Decoded as it arrives: the stream so far, without a trailer, already yields every frame sent.
  assert.deepEqual(inflateRawSync(Buffer.concat(lateParts).subarray(10), { finishFlush: constants.Z_SYNC_FLUSH }), Buffer.concat([hello(2).plain, blocks[1]!.plain, blocks[2]!.plain]));
});

test('CRC-32 combination equals the CRC of the concatenation', () => {
  for (const [a, b] of [[0, 0], [0, 5], [1, 1], [17, 4096], [100_000, 3], [65_537, 131_071]] as const) {
    const left = randomBytes(a);
    const right = randomBytes(b);
    assert.equal(combineCrc(crc32(left), crc32(right), b), crc32(Buffer.concat([left, right])), `${a} + ${b} bytes`);
  }
});
