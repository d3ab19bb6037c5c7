/** Three discv5 nodes on loopback: two that know only the first find each other, with their RLPx TCP ports. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { startDiscv5, type DiscoveredNode, type Discv5Service } from '../../../net/discovery/discv5.js';
import { nodeIdOf } from '../../../net/p2p/enode.js';
import { decodeNodeRecord } from '../../../net/discovery/enr.js';
import { freePort } from '../../support/ports.js';

async function node(bootnodes: string[], tcpPort: number, found: DiscoveredNode[]): Promise<{ service: Discv5Service; key: Uint8Array }> {
  const key = secp256k1.utils.randomSecretKey();
  const service = await startDiscv5({
    privateKey: key, host: '127.0.0.1', udpPort: await freePortUdp(), tcpPort, bootnodes, lookupIntervalMs: 500, lookupTimeoutMs: 1000,
    onNode: (n) => found.push(n), onError: () => undefined,
  });
  return { service, key };
}

/** A free UDP port: the TCP helper's port is free for UDP too on an idle loopback (checked by binding). */
async function freePortUdp(): Promise<number> {
  const { createSocket } = await import('node:dgram');
  for (;;) {
    const port = await freePort();
    const socket = createSocket('udp4');
    const ok = await new Promise<boolean>((resolve) => {
      socket.once('error', () => resolve(false));
      socket.bind(port, '127.0.0.1', () => resolve(true));
    });
    await new Promise<void>((resolve) => (ok ? socket.close(() => resolve()) : resolve()));
    if (ok) return port;
  }
}

describe('discv5 on loopback', () => {
  it('two nodes seeded with a third find each other and learn each other\'s RLPx port', async (t) => {
    const seen: DiscoveredNode[][] = [[], [], []];
    const boot = await node([], 30_501, seen[0]!);
    t.after(() => boot.service.stop());
    const b = await node([boot.service.enr], 30_502, seen[1]!);
    t.after(() => b.service.stop());
    const c = await node([boot.service.enr], 30_503, seen[2]!);
    t.after(() => c.service.stop());
    const knows = (list: DiscoveredNode[], key: Uint8Array, tcp: number) => list.some((n) => Buffer.from(n.publicKey).equals(Buffer.from(nodeIdOf(key))) && n.tcp === tcp && n.ip === '127.0.0.1');
    const deadline = Date.now() + 20_000;
    while (!(knows(seen[1]!, c.key, 30_503) && knows(seen[2]!, b.key, 30_502))) {
      assert.ok(Date.now() < deadline, 'the nodes did not find each other within 20 s');
      await Promise.all([b.service.lookup(), c.service.lookup()]);
    }
    assert.ok(knows(seen[1]!, boot.key, 30_501));
  });

  it('announces the nat extip address in its record while bound to loopback', async (t) => {
    const key = secp256k1.utils.randomSecretKey();
    const service = await startDiscv5({
      privateKey: key, host: '127.0.0.1', udpPort: await freePortUdp(), tcpPort: 30_504, bootnodes: [], announceIp: '203.0.113.7',
      lookupIntervalMs: 60_000, lookupTimeoutMs: 1000, onNode: () => undefined, onError: () => undefined,
    });
    t.after(() => service.stop());
    const record = decodeNodeRecord(service.enr);
    assert.equal(record.ip, '203.0.113.7');
    assert.equal(record.tcp, 30_504);
  });
});
