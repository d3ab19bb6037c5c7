/**
 * discv4 on loopback (`net/discovery/discv4.ts` over devp2p's DPT): two nodes that know only a third (the bootnode,
 * a plain @ethereumjs/devp2p DPT, as a third-party discv4 peer) find each other through its neighbours and learn
 * each other's RLPx TCP port and node id.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DPT } from '@ethereumjs/devp2p';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { startDiscv4, type Discv4Service } from '../../../net/discovery/discv4.js';
import type { DiscoveredNode } from '../../../net/discovery/discv5.js';
import { nodeIdOf } from '../../../net/p2p/enode.js';
import { freePort, freeUdpPort } from '../../support/ports.js';


/** Resolves once `found` holds the node `id` (checked on every discovery). */
function waitForNode(found: DiscoveredNode[], listeners: (() => void)[], id: Uint8Array): Promise<DiscoveredNode> {
  return new Promise((resolve) => {
    const check = () => {
      const node = found.find((n) => Buffer.from(n.publicKey).equals(Buffer.from(id)));
      if (node) resolve(node);
    };
    listeners.push(check);
    check();
  });
}

describe('discv4 on loopback', () => {
  it('two nodes seeded with a DPT bootnode find each other with their RLPx ports', async (t) => {
    const bootKey = secp256k1.utils.randomSecretKey();
    const bootPort = await freeUdpPort();
    const boot = new DPT(bootKey, { endpoint: { address: '127.0.0.1', udpPort: bootPort, tcpPort: null }, refreshInterval: 60_000, shouldGetDnsPeers: false });
    await new Promise<void>((resolve) => {
      boot.events.once('listening', () => resolve());
      boot.bind(bootPort, '127.0.0.1');
    });
    t.after(() => boot.destroy());
    const bootnode = { id: nodeIdOf(bootKey), host: '127.0.0.1', tcpPort: 0, udpPort: bootPort };
    const nodes: { key: Uint8Array; tcp: number; found: DiscoveredNode[]; listeners: (() => void)[]; service: Discv4Service }[] = [];
    for (const tcp of [30_601, 30_602]) {
      const key = secp256k1.utils.randomSecretKey();
      const found: DiscoveredNode[] = [];
      const listeners: (() => void)[] = [];
      const service = await startDiscv4({
        privateKey: key, host: '127.0.0.1', udpPort: await freeUdpPort(), tcpPort: tcp, bootnodes: [bootnode], refreshIntervalMs: 1000, timeoutMs: 2000,
        onNode: (node) => {
          found.push(node);
          for (const listener of listeners) listener();
        },
        onError: () => undefined,
      });
      t.after(() => service.stop());
      nodes.push({ key, tcp, found, listeners, service });
    }
    const [a, b] = nodes as [typeof nodes[0], typeof nodes[0]];
    // b joined after a: b learns of a from the bootnode's neighbours; a hears of b on its next refresh.
    const [aSeenByB, bSeenByA] = await Promise.all([waitForNode(b.found, b.listeners, nodeIdOf(a.key)), waitForNode(a.found, a.listeners, nodeIdOf(b.key))]);
    assert.equal(aSeenByB.ip, '127.0.0.1');
    assert.equal(aSeenByB.tcp, a.tcp);
    assert.equal(aSeenByB.udp, a.service.port);
    assert.equal(bSeenByA.tcp, b.tcp);
    assert.ok(a.service.tableSize() >= 1);
  });

  it('a bootnode that was down at start is found once it is up, not after devp2p\'s five-minute ban', async (t) => {
    const bootKey = secp256k1.utils.randomSecretKey();
    const bootPort = await freeUdpPort();
    const errors: string[] = [];
    const service = await startDiscv4({
      privateKey: secp256k1.utils.randomSecretKey(), host: '127.0.0.1', udpPort: await freeUdpPort(), tcpPort: 30_603,
      bootnodes: [{ id: nodeIdOf(bootKey), host: '127.0.0.1', tcpPort: 0, udpPort: bootPort }], refreshIntervalMs: 500, timeoutMs: 300,
      onNode: () => undefined,
      onError: (error) => errors.push(error.message),
    });
    t.after(() => service.stop());
    // The first ping timed out (devp2p banned the bootnode for five minutes) before the bootnode starts.
    await until(() => errors.length > 0, 'the first ping to time out');
    assert.equal(service.tableSize(), 0);
    const boot = new DPT(bootKey, { endpoint: { address: '127.0.0.1', udpPort: bootPort, tcpPort: null }, refreshInterval: 60_000, shouldGetDnsPeers: false });
    await new Promise<void>((resolve) => {
      boot.events.once('listening', () => resolve());
      boot.bind(bootPort, '127.0.0.1');
    });
    t.after(() => boot.destroy());
    await until(() => service.tableSize() > 0, 'the bootnode in the table');
    assert.ok(!errors.slice(1).some((message) => /banned/i.test(message)), `retries refused as banned: ${errors.join('; ')}`);
  });
});

/** Polls `condition` (the DPT reports no event for a table change) until it holds; fails after 60 s, far below the ban. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
