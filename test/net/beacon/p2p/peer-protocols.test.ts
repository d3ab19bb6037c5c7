/**
 * Status, Ping, MetaData and Goodbye (consensus-specs phase0/altair/fulu p2p-interface). Encodings are checked against
 * byte layouts written out from the spec's containers (consensus-specs ships no ssz_static vectors for these p2p-only
 * types). The loopback tests run the node's consensus network (startConsensusPeers) against an independent libp2p
 * dialer written here: its own snappy framing (uncompressed frames, CRC-32C), its own varints and SSZ layouts, only
 * `snappyjs` to read the node's compressed frames. It answers the node's Status, asks for the node's Status, Ping and
 * MetaData, and one with another fork digest is sent Goodbye 2 and dropped.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { multiaddr } from '@multiformats/multiaddr';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { MAINNET } from '../../../../net/beacon/config.js';
import { ENR } from '@chainsafe/enr';
import { recordEntries, startConsensusPeers, type ConsensusPeers } from '../../../../net/beacon/p2p/consensus-peers.js';
import { forkDigest, MAINNET_BLOB_SCHEDULE } from '../../../../net/beacon/p2p/fork-digest.js';
import {
  decodeMetadata, decodeStatus, encodeMetadata, encodeStatus, irrelevance, lightClientStatus, versionsAt, type Status,
} from '../../../../net/beacon/p2p/peer-protocols.js';
import { decodeRequest, encodePayload } from '../../../../net/beacon/p2p/req-resp.js';
import { fill, startDialer, u64, type Dialer } from './raw-peer.js';
import { until } from '../../../support/until.js';


describe('Status, Ping, MetaData, Goodbye encodings', () => {
  const status: Status = { forkDigest: Uint8Array.of(1, 2, 3, 4), finalizedRoot: fill(0xaa), finalizedEpoch: 5n, headRoot: fill(0xbb), headSlot: 200n, earliestAvailableSlot: 180n };

  test('Status v1 is digest ‖ finalized root ‖ epoch ‖ head root ‖ slot (84 bytes); v2 appends earliest_available_slot', () => {
    const v1 = Buffer.concat([Buffer.of(1, 2, 3, 4), fill(0xaa), u64(5), fill(0xbb), u64(200)]);
    assert.equal(Buffer.from(encodeStatus(1, status)).toString('hex'), v1.toString('hex'));
    assert.equal(v1.length, 84);
    const v2 = Buffer.concat([v1, u64(180)]);
    assert.equal(Buffer.from(encodeStatus(2, status)).toString('hex'), v2.toString('hex'));
    assert.deepEqual(decodeStatus(2, Uint8Array.from(v2)), status);
    assert.deepEqual(decodeStatus(1, Uint8Array.from(v1)), { ...status, earliestAvailableSlot: null });
    // On the wire: varint(84) = 0x54, then snappy frames; a request of another length is refused before decompression.
    assert.equal(encodePayload(v1)[0], 0x54);
    assert.throws(() => decodeRequest(encodePayload(v1.subarray(0, 83)), 84, 84), /83 bytes/);
    assert.throws(() => decodeStatus(1, v2), /./);
  });

  test('MetaData v1/v2/v3: seq ‖ attnets (Bitvector[64]) ‖ syncnets (Bitvector[4]) ‖ custody_group_count', () => {
    const attnets = new Array<boolean>(64).fill(false);
    attnets[0] = true;
    attnets[9] = true;
    attnets[63] = true;
    const metadata = { seqNumber: 7n, attnets, syncnets: [false, true, false, true], custodyGroupCount: 4n };
    const attBytes = Buffer.of(0x01, 0x02, 0, 0, 0, 0, 0, 0x80);
    const v1 = Buffer.concat([u64(7), attBytes]);
    const v2 = Buffer.concat([v1, Buffer.of(0b1010)]);
    const v3 = Buffer.concat([v2, u64(4)]);
    assert.equal(Buffer.from(encodeMetadata(1, metadata)).toString('hex'), v1.toString('hex'));
    assert.equal(Buffer.from(encodeMetadata(2, metadata)).toString('hex'), v2.toString('hex'));
    assert.equal(Buffer.from(encodeMetadata(3, metadata)).toString('hex'), v3.toString('hex'));
    assert.deepEqual(decodeMetadata(3, Uint8Array.from(v3)), metadata);
    assert.deepEqual(decodeMetadata(2, Uint8Array.from(v2)), { ...metadata, custodyGroupCount: 0n });
    // Bitvector[4]: bits above the length set is invalid SSZ.
    assert.throws(() => decodeMetadata(2, Buffer.concat([v1, Buffer.of(0x10)])));
  });

  test('versions per fork: phase0 → status 1 / metadata 1, Altair..Electra → 1 / 2, Fulu → status 2 / metadata 3', () => {
    assert.deepEqual(versionsAt(MAINNET, 0), { status: 1, metadata: 1 });
    assert.deepEqual(versionsAt(MAINNET, 74240), { status: 1, metadata: 2 });
    assert.deepEqual(versionsAt(MAINNET, 411391), { status: 1, metadata: 2 });
    assert.deepEqual(versionsAt(MAINNET, 411392), { status: 2, metadata: 3 });
  });

  test('node record entries: attnets and syncnets empty, Fulu cgc = 4 big-endian and nfd the next digest (zeros when none)', () => {
    const beforeBpo1 = recordEntries(MAINNET, MAINNET_BLOB_SCHEDULE, 411_400);
    assert.equal(Buffer.from(beforeBpo1.get('attnets')!).toString('hex'), '0000000000000000');
    assert.equal(Buffer.from(beforeBpo1.get('syncnets')!).toString('hex'), '00');
    assert.equal(Buffer.from(beforeBpo1.get('cgc')!).toString('hex'), '04');
    assert.equal(Buffer.from(beforeBpo1.get('nfd')!).toString('hex'), Buffer.from(forkDigest(MAINNET, MAINNET_BLOB_SCHEDULE, 412_672)).toString('hex'));
    assert.equal(Buffer.from(recordEntries(MAINNET, MAINNET_BLOB_SCHEDULE, 420_000).get('nfd')!).toString('hex'), '00000000');
    const noFulu = { ...MAINNET, forks: MAINNET.forks.filter((f) => f.name !== 'fulu') };
    assert.deepEqual([...recordEntries(noFulu, MAINNET_BLOB_SCHEDULE, 100).keys()], ['eth2', 'attnets', 'syncnets']);
  });

  test('irrelevance: another fork digest, or another finalized root at the same epoch (genesis exempt)', () => {
    assert.equal(irrelevance(status, { ...status, headSlot: 9n, finalizedEpoch: 4n, finalizedRoot: fill(1) }), null);
    assert.match(irrelevance(status, { ...status, forkDigest: Uint8Array.of(1, 2, 3, 5) }) ?? '', /fork digest 0x01020305, not 0x01020304/);
    assert.match(irrelevance(status, { ...status, finalizedRoot: fill(0xcc) }) ?? '', /finalized root 0xcc/);
    const genesis = { ...status, finalizedEpoch: 0n, finalizedRoot: new Uint8Array(32) };
    assert.equal(irrelevance(genesis, { ...genesis, finalizedRoot: fill(3) }), null);
  });

  test("the node's status from its light-client store: checkpoint before bootstrap, zero root for a finalized genesis", () => {
    const before = lightClientStatus(MAINNET, null, fill(0x44), 64);
    assert.deepEqual(before, { finalizedRoot: fill(0x44), finalizedEpoch: 2, headRoot: fill(0x44), headSlot: 64, earliestAvailableSlot: 64 });
    assert.deepEqual(lightClientStatus(MAINNET, null, fill(0x44), 0).finalizedRoot, new Uint8Array(32));
  });
});


const silent = { info: () => undefined, warn: () => undefined };
/** Wall clock at the start of a mainnet epoch. */
const atEpoch = (epoch: number) => (MAINNET.genesisTime + epoch * 32 * 12) * 1000 + 5_000;

describe('Status, Ping, MetaData, Goodbye against an independent libp2p peer (loopback)', () => {
  const stopped: Array<() => Promise<void>> = [];
  after(async () => {
    for (const stop of stopped.reverse()) await stop().catch(() => undefined);
  });

  async function startNode(epoch: number, pingIntervalMs = 60_000): Promise<ConsensusPeers> {
    const peers = await startConsensusPeers({
      privateKey: secp256k1.utils.randomSecretKey(), host: '127.0.0.1', tcpPort: 0, udpPort: 0, bootnodes: [], config: MAINNET, schedule: MAINNET_BLOB_SCHEDULE,
      checkpointSlot: 0, requestTimeoutMs: 30_000, lookupIntervalMs: 60_000, maxPeers: 8, log: silent, now: () => atEpoch(epoch), pingIntervalMs,
      chain: () => ({ finalizedRoot: fill(0x11), finalizedEpoch: epoch - 2, headRoot: fill(0x22), headSlot: epoch * 32 + 3, earliestAvailableSlot: epoch * 32 + 3 }),
      validate: () => 'accept', onGossip: () => undefined,
    });
    stopped.push(() => peers.stop());
    return peers;
  }
  async function dial(dialer: Dialer, peers: ConsensusPeers): Promise<void> {
    await dialer.node.dial(multiaddr(`/ip4/127.0.0.1/tcp/${peers.tcpPort}/p2p/${peers.peerId}`));
  }

  test('Fulu (a BPO digest): the node handshakes with Status v2, answers status/ping/metadata v3, asks metadata again when the ping seq changes, pings', async () => {
    const epoch = 420_000;
    const digest = forkDigest(MAINNET, MAINNET_BLOB_SCHEDULE, epoch);
    let metadataSeq = 7n;
    const peers = await startNode(epoch, 300);
    const dialer = await startDialer({ digest, metadataSeq: () => metadataSeq, pingSeq: () => metadataSeq });
    stopped.push(async () => { await dialer.node.stop(); });
    await dial(dialer, peers);
    assert.equal(Buffer.from(ENR.decodeTxt(peers.enr).kvs.get('cgc')!).toString('hex'), '04', 'the node record announces its custody group count');

    // The node sends Status v2 on connection, with its digest, finalized checkpoint, head and earliest slot.
    const sent = await until('the node\'s status request', () => dialer.received.find((r) => r.name === 'status'));
    assert.equal(sent.ssz.length, 92);
    assert.equal(sent.ssz.subarray(0, 4).toString('hex'), Buffer.from(digest).toString('hex'));
    assert.deepEqual(sent.ssz.subarray(4, 36), Buffer.from(fill(0x11)));
    assert.equal(sent.ssz.readBigUInt64LE(36), BigInt(epoch - 2));
    assert.deepEqual(sent.ssz.subarray(44, 76), Buffer.from(fill(0x22)));
    assert.equal(sent.ssz.readBigUInt64LE(76), BigInt(epoch * 32 + 3));
    assert.equal(sent.ssz.readBigUInt64LE(84), BigInt(epoch * 32 + 3));
    // Ready after the handshake: a light-client transport, and the node asked for our MetaData (v3).
    await until('the dialer as a ready peer', () => peers.connected() === 1);
    await until('the node\'s metadata request', () => dialer.received.some((r) => r.name === 'metadata'));
    await until('the recorded metadata', () => peers.protocols.peers.get(dialer.node.peerId.toString())?.metadata?.seqNumber === 7n);
    assert.equal(peers.protocols.peers.get(dialer.node.peerId.toString())?.metadata?.custodyGroupCount, 4n);

    // The dialer asks: Status v2, Ping, MetaData v3 (and v2).
    const status = await dialer.ask(peers.peerId, 'status/2', Buffer.concat([Buffer.from(digest), fill(0), u64(0), fill(0x77), u64(1), u64(0)]));
    assert.equal(status.result, 0);
    assert.equal(status.ssz.toString('hex'), sent.ssz.toString('hex'));
    const ping = await dialer.ask(peers.peerId, 'ping/1', u64(7));
    assert.deepEqual({ result: ping.result, seq: ping.ssz.readBigUInt64LE(0) }, { result: 0, seq: 0n });
    const metadata = await dialer.ask(peers.peerId, 'metadata/3', null);
    assert.equal(metadata.result, 0);
    assert.equal(metadata.ssz.toString('hex'), Buffer.concat([u64(0), Buffer.alloc(8), Buffer.of(0), u64(4)]).toString('hex'));
    assert.equal((await dialer.ask(peers.peerId, 'metadata/2', null)).ssz.length, 17);
    // A ping with a new sequence number makes the node ask for the MetaData again.
    const asked = dialer.received.filter((r) => r.name === 'metadata').length;
    metadataSeq = 8n;
    await dialer.ask(peers.peerId, 'ping/1', u64(8));
    await until('a second metadata request', () => dialer.received.filter((r) => r.name === 'metadata').length > asked);
    await until('the new metadata', () => peers.protocols.peers.get(dialer.node.peerId.toString())?.metadata?.seqNumber === 8n);
    // The node pings on its own (every 300 ms here).
    await until('a ping from the node', () => dialer.received.some((r) => r.name === 'ping' && r.ssz.readBigUInt64LE(0) === 0n));
    // A malformed status request gets InvalidRequest.
    assert.equal((await dialer.ask(peers.peerId, 'status/2', Buffer.alloc(84))).result, 1);

    // The node's shutdown says goodbye 1 (client shut down).
    await peers.stop();
    const goodbye = await until('the node\'s goodbye', () => dialer.received.find((r) => r.name === 'goodbye'));
    assert.equal(goodbye.ssz.readBigUInt64LE(0), 1n);
  });

  test('Altair era: Status v1 and MetaData v2; a peer that says goodbye is dropped', async () => {
    const epoch = 100_000;
    const digest = forkDigest(MAINNET, MAINNET_BLOB_SCHEDULE, epoch);
    const peers = await startNode(epoch);
    const dialer = await startDialer({ digest, metadataSeq: () => 1n, pingSeq: () => 1n });
    stopped.push(async () => { await dialer.node.stop(); });
    await dial(dialer, peers);
    const sent = await until('the node\'s status request', () => dialer.received.find((r) => r.name === 'status'));
    assert.equal(sent.ssz.length, 84);
    await until('the dialer as a ready peer', () => peers.connected() === 1);
    await until('the node\'s metadata v2 request', () => peers.protocols.peers.get(dialer.node.peerId.toString())?.metadata?.seqNumber === 1n);
    const status = await dialer.ask(peers.peerId, 'status/1', Buffer.concat([Buffer.from(digest), fill(0), u64(0), fill(0x77), u64(1)]));
    assert.equal(status.ssz.toString('hex'), sent.ssz.toString('hex'));
    const goodbye = await dialer.ask(peers.peerId, 'goodbye/1', u64(1));
    assert.equal(goodbye.result, 0);
    await until('the node dropping the peer', () => peers.connected() === 0 && dialer.node.getConnections().length === 0);
  });

  test('a peer answering with another fork digest is sent goodbye 2 (irrelevant network) and dropped', async () => {
    const epoch = 420_000;
    const peers = await startNode(epoch);
    const wrong = forkDigest(MAINNET, MAINNET_BLOB_SCHEDULE, 411_392); // Fulu before BPO1: a digest this node no longer uses
    const dialer = await startDialer({ digest: wrong, metadataSeq: () => 0n, pingSeq: () => 0n });
    stopped.push(async () => { await dialer.node.stop(); });
    await dial(dialer, peers);
    const goodbye = await until('goodbye from the node', () => dialer.received.find((r) => r.name === 'goodbye'));
    assert.equal(goodbye.ssz.readBigUInt64LE(0), 2n);
    await until('the connection closed', () => dialer.node.getConnections().length === 0);
    assert.equal(peers.connected(), 0);
    assert.equal(dialer.received.some((r) => r.name === 'metadata'), false, 'no metadata asked of an irrelevant peer');
  });

  test('a peer whose own status request names another fork digest gets the node\'s status, then goodbye 2', async () => {
    const epoch = 420_000;
    const digest = forkDigest(MAINNET, MAINNET_BLOB_SCHEDULE, epoch);
    const peers = await startNode(epoch);
    // The dialer answers the node's status correctly but asks with a wrong digest itself.
    const dialer = await startDialer({ digest, metadataSeq: () => 0n, pingSeq: () => 0n });
    stopped.push(async () => { await dialer.node.stop(); });
    await dial(dialer, peers);
    await until('the dialer as a ready peer', () => peers.connected() === 1);
    const answer = await dialer.ask(peers.peerId, 'status/2', Buffer.concat([Buffer.of(9, 9, 9, 9), fill(0), u64(0), fill(0x77), u64(1), u64(0)]));
    assert.equal(answer.result, 0);
    assert.equal(answer.ssz.subarray(0, 4).toString('hex'), Buffer.from(digest).toString('hex'));
    const goodbye = await until('goodbye from the node', () => dialer.received.find((r) => r.name === 'goodbye'));
    assert.equal(goodbye.ssz.readBigUInt64LE(0), 2n);
    await until('the node dropping the peer', () => peers.connected() === 0 && dialer.node.getConnections().length === 0);
  });
});
