/**
 * discv4 in the real node: `[sources.live] discovery_port` (≠ 0) runs discv4 on 127.0.0.1 seeded with
 * `discv4_bootnodes`, and the peers it finds are dialled with origin `discv4_or_5`. The bootnode is a plain
 * @ethereumjs/devp2p DPT (a third-party discv4 implementation) that knows the devnet peer only because the peer's
 * discv4 presence pinged it; the follower knows only the bootnode, so it finds the devnet peer through the bootnode's
 * NEIGHBORS answer, then dials, qualifies and follows it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DPT, type PeerInfo } from '@ethereumjs/devp2p';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { devnetPeerKey } from '../../net/devnet/p2p-server.js';
import { startDiscv4 } from '../../net/discovery/discv4.js';
import { nodeIdOf } from '../../net/p2p/enode.js';
import type { NetworkStatus } from '../../api/network-status.js';
import { freePort, freeUdpPort } from '../support/ports.js';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';

const DEVNET = ['devnet.block_time_ms=200', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100'];


async function blockNumber(node: NodeProcess): Promise<number> {
  const response = await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }) });
  return Number(BigInt(((await response.json()) as { result: string }).result));
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

test('a p2p node finds the devnet peer over discv4 from a bootnode', async (t) => {
  const port = await freePort();
  const bootKey = secp256k1.utils.randomSecretKey();
  const bootPort = await freeUdpPort();
  const boot = new DPT(bootKey, { endpoint: { address: '127.0.0.1', udpPort: bootPort, tcpPort: null }, refreshInterval: 60_000, shouldGetDnsPeers: false });
  await new Promise<void>((resolve) => {
    boot.events.once('listening', () => resolve());
    boot.bind(bootPort, '127.0.0.1');
  });
  t.after(() => boot.destroy());

  // The test holds the devnet peer's key, so it runs the peer's discv4 presence (announcing its RLPx port) and
  // waits until the bootnode has it in its table (it pings every node that pinged it before adding it).
  const peerId = hex(nodeIdOf(devnetPeerKey('chain-data-node')));
  const inBootTable = new Promise<void>((resolve) => {
    const check = () => {
      if (boot.getPeers().some((p) => p.id !== undefined && hex(p.id) === peerId)) resolve();
    };
    boot.events.on('peer:added', (_peer: PeerInfo) => check());
    check();
  });
  const bootnode = { id: nodeIdOf(bootKey), host: '127.0.0.1', tcpPort: 0, udpPort: bootPort };
  const presence = await startDiscv4({
    privateKey: devnetPeerKey('chain-data-node'), host: '127.0.0.1', udpPort: await freeUdpPort(), tcpPort: port, bootnodes: [bootnode],
    refreshIntervalMs: 60_000, timeoutMs: 2000, onNode: () => undefined, onError: () => undefined,
  });
  t.after(() => presence.stop());
  await inBootTable;

  // The producer and the follower start side by side: the follower finds the peer at once and re-dials it (backoff
  // at most 1 s) until the producer's RLPx listener is up; it is ready once it follows a qualified session.
  // The bootnode's enode URL: its TCP port is the UDP one (nothing listens there, as with a discovery-only bootnode).
  const bootEnode = `enode://${hex(nodeIdOf(bootKey))}@127.0.0.1:${bootPort}`;
  const started = await Promise.allSettled([
    startNodeProcess({ sets: [...DEVNET, `devnet.p2p_listen=127.0.0.1:${port}`] }),
    startNodeProcess({
      toml: `[sources.live]\nkind = "p2p"\ndiscovery_port = ${await freeUdpPort()}\ndiscv4_bootnodes = ["${bootEnode}"]\nnat = "extip:127.0.0.1"\npoll_interval_ms = 100\nbackoff_max_ms = 1000\n[finality]\nkind = "devnet"\n`,
      sets: DEVNET, readyTimeoutMs: 30_000,
    }),
  ]);
  for (const result of started) if (result.status === 'fulfilled') t.after(async () => { await result.value.stop(); removeDir(result.value.dir); });
  for (const result of started) if (result.status === 'rejected') throw result.reason;
  const [producer, follower] = started.map((result) => (result as PromiseFulfilledResult<NodeProcess>).value) as [NodeProcess, NodeProcess];
  const target = await blockNumber(producer);
  await waitUntil(follower, async () => (await blockNumber(follower)) >= target, 30_000);
  const status = (await (await fetch(`${follower.baseUrl}/v1/network/status`)).json()) as NetworkStatus;
  assert.equal(status.network.byOrigin?.sessions.discv4_or_5, 1);
  assert.equal(status.network.byOrigin?.qualifications.discv4_or_5.qualified, 1);
  assert.ok((status.network.byOrigin?.admissions.discv4_or_5 ?? 0) >= 1);
  assert.equal(status.network.byOrigin?.sessions.trusted, 0);
  assert.equal(status.network.byOrigin?.sessions.dns_tree, 0);
  assert.ok(boot.getPeers().length >= 2, 'the follower pinged the bootnode too');
  // The devnet peer answers discv4 itself on its RLPx port (UDP): a ping returns its node id.
  const answered = await boot.addPeer({ address: '127.0.0.1', udpPort: port, tcpPort: port });
  assert.equal(hex(answered.id!), peerId);
  const metrics = await (await fetch(`${follower.baseUrl}/metrics`)).text();
  assert.match(metrics, /^node_p2p_qualifications_total\{[^}]*outcome="qualified"[^}]*\} [1-9]/m);
  assert.match(metrics, /^node_p2p_sessions(\{[^}]*\})? 1$/m);
});

test('bad discv4 settings are refused at start naming the key, the value and what is expected', async () => {
  const enode = `enode://${hex(nodeIdOf(secp256k1.utils.randomSecretKey()))}@127.0.0.1:30303`;
  const cases = [
    [`[sources.live]\nkind = "p2p"\ndiscovery_port = 30399\ndiscv4_bootnodes = ["enode://nope@127.0.0.1:1"]\n`, 'sources.live.discv4_bootnodes[0]', 'enode://'],
    [`[sources.live]\nkind = "p2p"\ndiscv4_bootnodes = ["${enode}"]\n`, 'sources.live.discovery_port', 'a UDP port'],
    [`[sources.live]\nkind = "p2p"\ndiscovery_port = 30399\n`, 'sources.live.trusted_peers', 'discv4_bootnodes'],
    [`[sources.live]\nkind = "p2p"\ndiscovery_port = 30399\ndiscv4_bootnodes = ["${enode}"]\nenable_discv5 = true\ndiscv5_port = 30399\n`, 'sources.live.discv5_port', 'other than discovery_port'],
  ] as const;
  await Promise.all(cases.map(async ([toml, key, expected]) => {
    const node = await startNodeProcess({ toml, waitReady: false });
    const code = await node.exited;
    removeDir(node.dir);
    assert.notEqual(code, 0);
    const line = node.output.find((l) => l.includes(key));
    assert.ok(line, `${key} named in:\n${node.output.join('\n')}`);
    assert.ok(line.includes(expected), `${expected} in: ${line}`);
  }));
});
