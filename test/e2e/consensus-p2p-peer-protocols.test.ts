/**
 * The real node (finality.kind = "consensus_p2p" on the devnet, whose beacon_p2p peer it handshakes with) answers
 * Status, Ping and MetaData from an independent libp2p dialer written for tests (test/net/beacon/p2p/raw-peer.ts, no
 * code of the node's p2p modules): its Status carries the devnet's fork digest and the finalized checkpoint and head
 * of its verified light-client store. A dialer whose Status names another fork digest is sent Goodbye 2 (irrelevant
 * network) and dropped; on shutdown the node sends Goodbye 1.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { multiaddr } from '@multiformats/multiaddr';
import { freePort } from '../support/ports.js';
import { removeDir, startNodeProcess, waitUntil } from '../support/node-process.js';
import { startDialer, u64, type Dialer } from '../net/beacon/p2p/raw-peer.js';
import { until } from '../support/until.js';

const DEVNET_CHECKPOINT = '0x09b0f1635ea8c671af3ba22f56bc2c58e66cb9925c5038a3ae20a9b850710b45';

const parseStatus = (ssz: Buffer) => ({
  digest: ssz.subarray(0, 4).toString('hex'), finalizedRoot: ssz.subarray(4, 36).toString('hex'), finalizedEpoch: ssz.readBigUInt64LE(36),
  headRoot: ssz.subarray(44, 76).toString('hex'), headSlot: ssz.readBigUInt64LE(76),
});


test('consensus_p2p node: status/ping/metadata answered to an independent dialer, a wrong fork digest gets goodbye 2, shutdown goodbye 1', async (t) => {
  const devnetPort = await freePort();
  const p2pPort = await freePort();
  const node = await startNodeProcess({
    sets: ['devnet.block_time_ms=150', 'devnet.reorg_every=0', 'devnet.finality_lag=4', 'finality.poll_interval_ms=500', 'finality.discovery_port=0',
      `finality.p2p_port=${p2pPort}`, `devnet.beacon_p2p=127.0.0.1:${devnetPort}`, 'finality.kind=consensus_p2p', `finality.checkpoint_root=${DEVNET_CHECKPOINT}`, 'finality.checkpoint_slot=0'],
    waitReady: true,
  });
  const dialers: Dialer[] = [];
  t.after(async () => {
    await node.stop();
    for (const d of dialers) await d.node.stop();
    removeDir(node.dir);
  });
  const started = node.output.find((line) => line.includes('consensus p2p started'));
  const nodePeerId = /"peerId":"([^"]+)"/.exec(started ?? '')?.[1];
  const devnetPeerId = /"peerId":"([^"]+)"/.exec(node.output.find((line) => line.includes('devnet consensus p2p peer listening')) ?? '')?.[1];
  assert.ok(nodePeerId && devnetPeerId, `peer ids in the log:\n${node.output.join('\n')}`);

  // The node and the devnet peer passed each other's status handshake (a peer is a transport only after it).
  assert.ok(node.output.some((line) => line.includes('consensus peer connected')));

  // An agreeable dialer (answers with the digest the node's own status names).
  const dialer = await startDialer({ digest: null, metadataSeq: () => 3n, pingSeq: () => 3n });
  dialers.push(dialer);
  await dialer.node.dial(multiaddr(`/ip4/127.0.0.1/tcp/${p2pPort}/p2p/${nodePeerId}`));
  const sent = parseStatus((await until('the node\'s status request', () => dialer.received.find((r) => r.name === 'status'))).ssz);
  await until('the node\'s metadata request', () => dialer.received.some((r) => r.name === 'metadata'));
  const ourStatus = Buffer.concat([Buffer.from(sent.digest, 'hex'), Buffer.alloc(32), u64(0), Buffer.alloc(32, 0x77), u64(1)]);
  const askStatus = async () => {
    const answer = await dialer.ask(nodePeerId!, 'status/1', ourStatus);
    assert.equal(answer.result, 0);
    return parseStatus(answer.ssz);
  };
  const first = await askStatus();
  assert.equal(first.digest, sent.digest);
  // The status follows the verified store: as the devnet finalizes, the node's finalized epoch leaves genesis.
  let status = first;
  const deadline = Date.now() + 60_000;
  while (status.finalizedEpoch === 0n) {
    assert.ok(Date.now() < deadline, `the node's status stayed at finalized epoch 0:\n${node.output.slice(-20).join('\n')}`);
    status = await askStatus();
    if (status.finalizedEpoch === 0n) await new Promise<void>((resolve) => { const at = node.output.length; const timer = setInterval(() => { if (node.output.length > at) { clearInterval(timer); resolve(); } }, 25); });
  }
  assert.equal(status.digest, sent.digest);
  assert.notEqual(status.finalizedRoot, '00'.repeat(32));
  assert.ok(status.headSlot > 0n && status.headRoot !== '00'.repeat(32), `head slot ${status.headSlot}`);
  const ping = await dialer.ask(nodePeerId!, 'ping/1', u64(3));
  assert.deepEqual([ping.result, ping.ssz.readBigUInt64LE(0)], [0, 0n]);
  const metadata = await dialer.ask(nodePeerId!, 'metadata/2', null);
  assert.deepEqual([metadata.result, metadata.ssz.length, metadata.ssz.readBigUInt64LE(0)], [0, 17, 0n]);

  // The devnet's peer names the same digest, and its finalized checkpoint is at least the node's.
  await dialer.node.dial(multiaddr(`/ip4/127.0.0.1/tcp/${devnetPort}/p2p/${devnetPeerId}`));
  const devnet = parseStatus((await dialer.ask(devnetPeerId!, 'status/1', Buffer.concat([Buffer.from(sent.digest, 'hex'), Buffer.alloc(32), u64(0), Buffer.alloc(32, 0x77), u64(1)]))).ssz);
  assert.equal(devnet.digest, status.digest);
  assert.ok(devnet.finalizedEpoch >= status.finalizedEpoch);

  // A dialer on another network: goodbye 2, dropped.
  const stranger = await startDialer({ digest: Uint8Array.of(0xde, 0xad, 0xbe, 0xef), metadataSeq: () => 0n, pingSeq: () => 0n });
  dialers.push(stranger);
  await stranger.node.dial(multiaddr(`/ip4/127.0.0.1/tcp/${p2pPort}/p2p/${nodePeerId}`));
  const goodbye = await until('goodbye to the stranger', () => stranger.received.find((r) => r.name === 'goodbye'));
  assert.equal(goodbye.ssz.readBigUInt64LE(0), 2n);
  await until('the stranger dropped', () => stranger.node.getConnections().length === 0);
  await waitUntil(node, async () => node.output.some((line) => line.includes('consensus peer sent goodbye') && line.includes('deadbeef')), 10_000);

  // Shutdown: goodbye 1 to the agreeable dialer.
  await node.stop();
  const bye = await until('goodbye on shutdown', () => dialer.received.find((r) => r.name === 'goodbye'), 10_000);
  assert.equal(bye.ssz.readBigUInt64LE(0), 1n);
});
