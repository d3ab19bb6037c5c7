/**
 * An independent consensus Req/Resp peer for tests (no code of the node's p2p modules): plain libp2p (TCP, noise,
 * yamux), its own snappy framing (uncompressed frames with CRC-32C), varints and SSZ layouts; only `snappyjs` to read
 * compressed frames. It answers Status, Ping, MetaData and Goodbye, records every request made of it, and asks any of
 * them of a connected peer.
 */
import assert from 'node:assert/strict';
// libp2p 2.9 calls Promise.withResolvers, which Node 20 lacks (the project's polyfill; no protocol code).
import '../../../../net/beacon/p2p/promise-with-resolvers.js';
import { createLibp2p, type Libp2p } from 'libp2p';
import { tcp } from '@libp2p/tcp';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import * as snappyjs from 'snappyjs';

export const u64 = (value: number | bigint) => {
  const out = Buffer.alloc(8);
  out.writeBigUInt64LE(BigInt(value));
  return out;
};
export const fill = (byte: number, n = 32) => new Uint8Array(n).fill(byte);


const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();
function crc32c(data: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of data) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
const maskedCrc = (data: Uint8Array) => {
  const crc = crc32c(data);
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
};
function varint(n: number): Buffer {
  const out: number[] = [];
  while (n >= 0x80) { out.push((n & 0x7f) | 0x80); n >>>= 7; }
  out.push(n);
  return Buffer.from(out);
}
/** varint(length) ‖ stream identifier ‖ one uncompressed chunk. */
function payload(ssz: Uint8Array): Buffer {
  const header = Buffer.alloc(8);
  header[0] = 0x01;
  header.writeUIntLE(ssz.length + 4, 1, 3);
  header.writeUInt32LE(maskedCrc(ssz), 4);
  return Buffer.concat([varint(ssz.length), Buffer.from('ff060000734e61507059', 'hex'), header, ssz]);
}
/** Reads varint(length) ‖ frames at `at`; returns the SSZ bytes and where they end. */
function readPayload(bytes: Buffer, at: number): { ssz: Buffer; next: number } {
  let length = 0;
  let shift = 0;
  for (;;) {
    const byte = bytes[at++]!;
    length += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if ((byte & 0x80) === 0) break;
  }
  const parts: Buffer[] = [];
  let got = 0;
  while (got < length) {
    const type = bytes[at]!;
    const size = bytes.readUIntLE(at + 1, 3);
    const body = bytes.subarray(at + 4, at + 4 + size);
    at += 4 + size;
    if (type === 0xff) continue;
    const data = type === 0x00 ? Buffer.from(snappyjs.uncompress(body.subarray(4))) : type === 0x01 ? body.subarray(4) : null;
    if (!data) throw new Error(`frame type ${type}`);
    assert.equal(body.readUInt32LE(0), maskedCrc(data), 'frame checksum');
    parts.push(data);
    got += data.length;
  }
  return { ssz: Buffer.concat(parts), next: at };
}
type RawStream = { source: AsyncIterable<{ subarray(): Uint8Array }>; sink(source: Iterable<Uint8Array>): Promise<void> };
async function drain(stream: RawStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream.source) parts.push(Buffer.from(chunk.subarray()));
  return Buffer.concat(parts);
}

export interface Dialer {
  node: Libp2p;
  /** Requests the node sent, by protocol name (status, ping, metadata, goodbye), with their SSZ bodies. */
  received: Array<{ name: string; ssz: Buffer }>;
  ask(peer: string, name: string, ssz: Buffer | null): Promise<{ result: number; ssz: Buffer }>;
}

/**
 * `digest`: the fork digest its Status answers carry; null: the one the requester's own Status named (a peer on the
 * requester's network, whatever that is).
 */
export async function startDialer(answers: { digest: Uint8Array | null; metadataSeq: () => bigint; pingSeq: () => bigint }): Promise<Dialer> {
  const node = await createLibp2p({ addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] }, transports: [tcp()], connectionEncrypters: [noise()], streamMuxers: [yamux()] });
  await node.start();
  const received: Array<{ name: string; ssz: Buffer }> = [];
  const status = (version: number, request: Buffer) => Buffer.concat([
    Buffer.from(answers.digest ?? request.subarray(0, 4)), fill(0), u64(0), fill(0x77), u64(1), ...(version === 2 ? [u64(0)] : []),
  ]);
  const serve = (name: string, version: number, answer: (request: Buffer) => Buffer) => node.handle(`/eth2/beacon_chain/req/${name}/${version}/ssz_snappy`, async ({ stream }) => {
    const raw = stream as unknown as RawStream;
    const request = await drain(raw);
    const ssz = request.length ? readPayload(request, 0).ssz : Buffer.alloc(0);
    received.push({ name, ssz });
    await raw.sink([Buffer.concat([Buffer.of(0), payload(answer(ssz))])]).catch(() => undefined);
  });
  await serve('status', 1, (request) => status(1, request));
  await serve('status', 2, (request) => status(2, request));
  await serve('ping', 1, () => u64(answers.pingSeq()));
  await serve('metadata', 2, () => Buffer.concat([u64(answers.metadataSeq()), Buffer.alloc(8), Buffer.of(0)]));
  await serve('metadata', 3, () => Buffer.concat([u64(answers.metadataSeq()), Buffer.alloc(8), Buffer.of(0), u64(4)]));
  await serve('goodbye', 1, () => u64(0));
  return {
    node,
    received,
    async ask(peer, name, ssz) {
      const target = node.getConnections().find((c) => c.remotePeer.toString() === peer)?.remotePeer;
      if (!target) throw new Error(`not connected to ${peer}`);
      const stream = (await node.dialProtocol(target, `/eth2/beacon_chain/req/${name}/ssz_snappy`)) as unknown as RawStream;
      await stream.sink(ssz ? [payload(ssz)] : []);
      const bytes = await drain(stream);
      return { result: bytes[0]!, ssz: readPayload(bytes, 1).ssz };
    },
  };
}

