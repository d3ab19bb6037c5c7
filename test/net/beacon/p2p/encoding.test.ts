/**
 * The consensus p2p encodings: snappy framing (CRC-32C check value, round trips across the 64 KiB chunk limit, a
 * flipped byte fails the checksum), ssz_snappy Req/Resp chunks (varint length, context bytes, error chunks, length
 * bounds), fork digests (mainnet's known digests, the consensus-specs Fulu vectors for blob-parameter-only forks, the
 * `eth2` entry a mainnet bootnode announces) and light-client SSZ ↔ Beacon API JSON per fork.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENR } from '@chainsafe/enr';
import { MAINNET, type BeaconChainConfig } from '../../../../net/beacon/config.js';
import { parseFinalityUpdate } from '../../../../net/beacon/json.js';
import { digestForks, enrForkId, forkDigest, MAINNET_BLOB_SCHEDULE, type BlobSchedule } from '../../../../net/beacon/p2p/fork-digest.js';
import { jsonToSsz, sszToJson } from '../../../../net/beacon/p2p/light-client-ssz.js';
import { MAINNET_CONSENSUS_BOOTNODES } from '../../../../net/beacon/p2p/mainnet-bootnodes.js';
import { decodeRequest, decodeResponse, encodeErrorChunk, encodePayload, encodeSuccessChunk, RESULT } from '../../../../net/beacon/p2p/req-resp.js';
import { crc32c, decodeFrames, encodeFrames, SnappyFrameError } from '../../../../net/beacon/p2p/snappy-frames.js';
import { FIXTURES } from '../../../support/paths.js';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

test('snappy frames: CRC-32C check value, round trips over the chunk limit, a flipped byte fails', () => {
  assert.equal(crc32c(new TextEncoder().encode('123456789')), 0xe3069283);
  for (const size of [0, 1, 100, 65536, 65537, 200_000]) {
    const data = Uint8Array.from({ length: size }, (_, i) => (i * 7) % 13);
    const framed = encodeFrames(data);
    assert.deepEqual(framed.subarray(0, 10), Uint8Array.of(0xff, 6, 0, 0, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59));
    const { data: back, next } = decodeFrames(framed, 0, size);
    assert.deepEqual(back, data);
    assert.equal(next, framed.length);
  }
  const framed = encodeFrames(new TextEncoder().encode('light client '.repeat(50)));
  const tampered = framed.slice();
  tampered[14] = tampered[14]! ^ 0xff; // inside the first chunk's checksum
  assert.throws(() => decodeFrames(tampered, 0, 650), SnappyFrameError);
  assert.throws(() => decodeFrames(framed, 0, 649), /more than the 649 bytes declared/);
  assert.throws(() => decodeFrames(framed.subarray(0, framed.length - 1), 0, 650), /ends past the input|end early/);
});

test('ssz_snappy chunks: success with context bytes, error chunks end the response, lengths are bounded', () => {
  const root = Uint8Array.from({ length: 32 }, (_, i) => i);
  assert.deepEqual(decodeRequest(encodePayload(root), 32, 32), root);
  assert.throws(() => decodeRequest(encodePayload(root.subarray(0, 31)), 32, 32), /a request of 31 bytes/);
  const context = Uint8Array.of(0xad, 0x53, 0x2c, 0xeb);
  const response = new Uint8Array([...encodeSuccessChunk(context, root), ...encodeSuccessChunk(context, root), ...encodeErrorChunk(RESULT.resourceUnavailable, 'none here'), ...encodeSuccessChunk(context, root)]);
  const chunks = decodeResponse(response, { contextBytes: true, maxSize: 32, maxChunks: 5 });
  assert.equal(chunks.length, 3, 'the error chunk ends the response');
  assert.deepEqual(chunks[0]!.context, context);
  assert.deepEqual(chunks[1]!.payload, root);
  assert.equal(chunks[2]!.result, RESULT.resourceUnavailable);
  assert.equal(chunks[2]!.message, 'none here');
  assert.throws(() => decodeResponse(encodeSuccessChunk(context, root), { contextBytes: true, maxSize: 31, maxChunks: 1 }), /declares 32 bytes \(at most 31\)/);
  assert.throws(() => decodeResponse(response, { contextBytes: true, maxSize: 32, maxChunks: 1 }), /more than the 1 response chunks/);
});

test('fork digests: mainnet forks, the Fulu blob-parameter-only vectors, and a mainnet bootnode\'s eth2 entry', () => {
  const digests = [...digestForks(MAINNET, MAINNET_BLOB_SCHEDULE)].map(([digest, fork]) => `${fork}:${digest}`);
  for (const known of ['phase0:b5303f2a', 'altair:afcaaba0', 'bellatrix:4a26c58b', 'capella:bba4da96', 'deneb:6a95a1a9', 'electra:ad532ceb']) assert.ok(digests.includes(known), known);
  // Fulu and each BPO fork have their own digest under one fork version.
  assert.equal(digests.filter((d) => d.startsWith('fulu:')).length, 3);
  // consensus-specs tests/…/fulu/validator/test_compute_fork_digest.py (FULU_FORK_EPOCH 0, zero genesis validators root).
  const chain: BeaconChainConfig = { ...MAINNET, genesisValidatorsRoot: new Uint8Array(32), forks: MAINNET.forks.map((f) => ({ ...f, epoch: 0 })) };
  const schedule: BlobSchedule = { electraMaxBlobsPerBlock: 9, entries: [[9, 9], [100, 100], [150, 175], [200, 200], [250, 275], [300, 300]].map(([epoch, maxBlobsPerBlock]) => ({ epoch: epoch!, maxBlobsPerBlock: maxBlobsPerBlock! })) };
  for (const [epoch, expected] of [[9, 'ab3ae6c8'], [99, 'ab3ae6c8'], [100, 'df67557b'], [150, '8ab38b59'], [199, '8ab38b59'], [200, 'd9b81438'], [250, '4ef32a62'], [300, 'ca100d64'], [301, 'ca100d64']] as const) {
    assert.equal(hex(forkDigest(chain, schedule, epoch)), expected, `epoch ${epoch}`);
  }
  assert.equal(hex(forkDigest({ ...chain, genesisValidatorsRoot: new Uint8Array(32).fill(1) }, schedule, 9)), '89671111');
  // The Lighthouse bootnodes announce the genesis fork id: our ENRForkID at epoch 0 is byte for byte theirs.
  const lighthouse = ENR.decodeTxt(MAINNET_CONSENSUS_BOOTNODES[5]!);
  assert.equal(hex(lighthouse.kvs.get('eth2')!), hex(enrForkId(MAINNET, MAINNET_BLOB_SCHEDULE, 0)));
});

test('light-client SSZ: the recorded mainnet finality update survives JSON → SSZ (its fork\'s shape) → JSON and parses the same', () => {
  const recorded = JSON.parse(readFileSync(join(FIXTURES, 'helios', 'beacon', 'finality.json'), 'utf8')) as { version: 'capella'; data: { sync_aggregate: { sync_committee_signature: string } } };
  assert.equal(recorded.version, 'capella');
  const ssz = jsonToSsz(MAINNET, recorded.version, 'finality_update', recorded.data);
  const back = sszToJson(MAINNET, recorded.version, 'finality_update', ssz);
  assert.equal(back.version, 'capella');
  assert.deepEqual(parseFinalityUpdate(MAINNET, back), parseFinalityUpdate(MAINNET, recorded));
  // One flipped byte of the signature in the SSZ bytes reaches the parsed update (and so the BLS check).
  const signature = Buffer.from(recorded.data.sync_aggregate.sync_committee_signature.slice(2), 'hex');
  const at = Buffer.from(ssz).indexOf(signature);
  assert.ok(at > 0);
  const flipped = ssz.slice();
  flipped[at + 10] = flipped[at + 10]! ^ 1;
  assert.notDeepEqual(parseFinalityUpdate(MAINNET, sszToJson(MAINNET, 'capella', 'finality_update', flipped)).syncAggregate.signature, parseFinalityUpdate(MAINNET, recorded).syncAggregate.signature);
  // Read in another fork's shape (a lying context), the bytes do not decode.
  assert.throws(() => sszToJson(MAINNET, 'electra', 'finality_update', ssz));
  assert.throws(() => sszToJson(MAINNET, 'capella', 'finality_update', ssz.subarray(1)));
});
