/**
 * consensus_p2p transport against the devnet's libp2p peer on loopback: the peer is found through its discv5 record's
 * `eth2` fork id (given as the bootnode), a light client bootstraps from the devnet's genesis root over
 * `light_client_bootstrap`, catches up over `light_client_updates_by_range` across committee hand-overs, follows
 * `light_client_finality_update` and the gossip topic, verifying everything with the same sync protocol as beacon_api;
 * a peer serving a tampered update is not believed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { BeaconLightClient } from '../../../../net/beacon/light-client.js';
import { startConsensusPeers, type ConsensusPeers, type GossipName } from '../../../../net/beacon/p2p/consensus-peers.js';
import { NO_BLOB_SCHEDULE } from '../../../../net/beacon/p2p/fork-digest.js';
import { createDevnet, type Devnet } from '../../../../net/devnet/index.js';
import { devnetBeaconConfig } from '../../../../net/devnet/beacon-chain.js';
import { DevnetBeaconChain } from '../../../../net/devnet/beacon-objects.js';
import { devnetLightClientData, startDevnetBeaconPeer, type DevnetBeaconPeer } from '../../../../net/devnet/beacon-p2p.js';
import type { LightClientData } from '../../../../net/beacon/p2p/light-client-server.js';
import { lightClientStatus } from '../../../../net/beacon/p2p/peer-protocols.js';
import { startDiscv5 } from '../../../../net/discovery/discv5.js';
import { ENR } from '@chainsafe/enr';
import { freeUdpPort } from '../../../support/ports.js';
import { until } from '../../../support/until.js';


const HEAD = 150;
const LAG = 8;
const silent = { info: () => undefined, warn: () => undefined };


describe('consensus p2p light-client transport (devnet peer on loopback)', () => {
  let devnet: Devnet;
  let chain: DevnetBeaconChain;
  let peer: DevnetBeaconPeer;
  const started: ConsensusPeers[] = [];
  const config = () => chain.config;

  before(async () => {
    devnet = createDevnet({ seed: 'p2p-test', transactionsPerBlock: 1, blobTransactionsPerBlock: 0, reorgEvery: 0, finalityLag: LAG });
    await devnet.advanceTo(HEAD);
    const blocks = { blockAt: (n: number) => { const b = devnet.blockByNumber(n); return b && { header: b.block.header, hash: b.hash }; }, head: () => devnet.head().number };
    chain = new DevnetBeaconChain(devnetBeaconConfig(devnet.config), blocks, 'p2p-test', LAG);
    peer = await startDevnetBeaconPeer({ chain, head: () => devnet.head().number, seed: 'p2p-test', host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    for (const p of started) await p.stop();
    await peer?.close();
  });

  async function client(bootnodes: string[], gossip: Array<{ name: GossipName; json: unknown }> = [], validate = () => 'accept' as const): Promise<ConsensusPeers> {
    const peers = await startConsensusPeers({
      privateKey: secp256k1.utils.randomSecretKey(), host: '127.0.0.1', tcpPort: 0, udpPort: 0, bootnodes, config: config(), schedule: NO_BLOB_SCHEDULE,
      // The request bound only catches a hang: on a loaded 2-core machine the devnet peer's first answer (its epoch roots) can take seconds.
      checkpointSlot: 0, requestTimeoutMs: 30_000, lookupIntervalMs: 1000, maxPeers: 4, log: silent,
      chain: () => lightClientStatus(config(), null, chain.slot(0)!.root, 0),
      validate, onGossip: (name, json) => gossip.push({ name, json }),
    });
    started.push(peers);
    return peers;
  }

  test('a light client over Req/Resp verifies the bootstrap, every period update and the finality update', async () => {
    const peers = await client([peer.enr]);
    await until('a connected consensus peer', () => peers.connected() > 0);
    const light = new BeaconLightClient(config(), chain.slot(0)!.root, peers.clients);
    const report = await light.sync();
    assert.deepEqual(report.problems, []);
    assert.equal(report.verified, 4);
    const expectedSlot = Math.floor((HEAD - 1 - LAG) / 8) * 8;
    assert.equal(report.finalized?.slot, expectedSlot);
    assert.equal(report.finalized?.hash, devnet.blockByNumber(expectedSlot)!.hash);
  });

  test('gossip: the finality update published when finality moves reaches the subscriber and verifies', async () => {
    const gossip: Array<{ name: GossipName; json: unknown }> = [];
    const peers = await client([peer.enr], gossip);
    await until('a connected consensus peer', () => peers.connected() > 0);
    const light = new BeaconLightClient(config(), chain.slot(0)!.root, peers.clients);
    await light.sync();
    const before = light.finalized()!.slot;
    // The mesh forms within a few heartbeats: advance the devnet by an epoch at a time until a finality update arrives.
    let advancing = false;
    const update = await until('a gossiped finality update', () => {
      const found = gossip.find((g) => g.name === 'light_client_finality_update');
      if (!found && !advancing) {
        advancing = true;
        void devnet.advanceTo(devnet.head().number + 8).then(() => { peer.headChanged(); advancing = false; });
      }
      return found;
    }, 30_000);
    const finalized = light.offerFinalityUpdate(update.json);
    assert.ok(finalized && finalized.slot > before, 'the gossiped update advances the verified finalized header');
  });

  test('discv5: a peer learned from a bootnode that only does discovery is found by a lookup and dialed by its eth2 entry', async () => {
    // The bootnode serves no light-client data and announces no eth2 entry; it knows the devnet peer's record.
    const bootnode = await startDiscv5({
      privateKey: secp256k1.utils.randomSecretKey(), host: '127.0.0.1', udpPort: await freeUdpPort(), tcpPort: 0, bootnodes: [peer.enr],
      lookupIntervalMs: 60_000, lookupTimeoutMs: 2000, onNode: () => undefined, onError: () => undefined,
    });
    const bootnodePeerId = ENR.decodeTxt(bootnode.enr).peerId.toString();
    try {
      const peers = await client([bootnode.enr]);
      // Other light clients of this suite announce the same digest and may be found too; the serving peer must be among them.
      await until('the devnet peer found through the bootnode', () => peers.clients.some((c) => c.endpoint === `peer ${peer.peerId}`), 30_000);
      assert.ok(!peers.clients.some((c) => c.endpoint.endsWith(bootnodePeerId)), 'the discovery-only bootnode (no eth2 entry) is not dialed');
    } finally {
      await bootnode.stop();
    }
  });

  test('a node record announcing another fork digest (another chain) is never dialed', async () => {
    // Same devnet blocks, another seed: another genesis validators root, so another fork digest in its eth2 entry.
    const otherConfig = devnetBeaconConfig({ ...devnet.config, seed: 'another-chain' });
    const blocks = { blockAt: (n: number) => { const b = devnet.blockByNumber(n); return b && { header: b.block.header, hash: b.hash }; }, head: () => devnet.head().number };
    const other = await startDevnetBeaconPeer({ chain: new DevnetBeaconChain(otherConfig, blocks, 'another-chain', LAG), head: () => devnet.head().number, seed: 'another-chain', host: '127.0.0.1', port: 0 });
    try {
      // Records are considered in order: the other chain's first. Once the right peer is connected, the other was passed over.
      const peers = await client([other.enr, peer.enr]);
      await until('the devnet peer connected', () => peers.clients.some((c) => c.endpoint === `peer ${peer.peerId}`));
      assert.ok(!peers.clients.some((c) => c.endpoint === `peer ${other.peerId}`), 'the other chain\'s peer is not dialed');
    } finally {
      await other.close();
    }
  });

  test('a peer serving a tampered update is not believed', async () => {
    const honest = devnetLightClientData(chain, () => devnet.head().number);
    const tampered: LightClientData = {
      ...honest,
      finalityUpdate() {
        const object = honest.finalityUpdate();
        if (!object) return null;
        const data = structuredClone(object.data) as { finalized_header: { execution: { block_hash: string } } };
        data.finalized_header.execution.block_hash = `0x${'ee'.repeat(32)}`;
        return { slot: object.slot, data };
      },
    };
    const liar = await startDevnetBeaconPeer({ chain, head: () => devnet.head().number, seed: 'p2p-test-liar', host: '127.0.0.1', port: 0, data: tampered });
    try {
      const peers = await client([liar.enr]);
      await until('a connected consensus peer', () => peers.connected() > 0);
      const light = new BeaconLightClient(config(), chain.slot(0)!.root, peers.clients);
      const report = await light.sync();
      // The round fails on the tampered finality update (its execution header no longer hashes into body_root).
      assert.equal(report.verified, 0);
      assert.match(report.problems.join('; '), new RegExp(`peer ${liar.peerId}: .*execution_branch does not prove the execution header`));
      // The store holds the last honestly proven finalized header, never the tampered block.
      assert.notEqual(light.finalized()?.hash, `0x${'ee'.repeat(32)}`);
    } finally {
      await liar.close();
    }
  });
});
