/**
 * `[sources.live] nat = "upnp:<rootDesc URL>"` in the real node, against a stub Internet Gateway Device the test
 * runs on 127.0.0.1 (test/support/igd-stub.ts): the peer lane maps its RLPx TCP port, its discv4 UDP port and the
 * discv5 UDP port it bound (discv5_port = 0) for `nat_lease_seconds`, learns 203.0.113.9 from the gateway and
 * announces it — in the discv4 pings a bootnode receives and in the discv5 record the node answers with — shows
 * `mapped` on /v1/network/status (validated against the OpenAPI document), renews the mappings, and removes them on
 * SIGTERM. A gateway that refuses leaves the state `failed` with a retry countdown while the lane follows its
 * peer and readiness holds; once the gateway answers, the next retry maps.
 */
import { before, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { chromiumPage } from '../support/chromium.js';
import { decode as decodeDiscv4 } from '@ethereumjs/devp2p';
import { Discv5 } from '@chainsafe/discv5';
import { SignableENR } from '@chainsafe/enr';
import { privateKeyFromRaw } from '@libp2p/crypto/keys';
import { multiaddr } from '@multiformats/multiaddr';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { devnetPeerKey } from '../../net/devnet/p2p-server.js';
import { formatEnode, nodeIdOf } from '../../net/p2p/enode.js';
import type { NetworkStatus } from '../../api/network-status.js';
import { freePort, freeUdpPort } from '../support/ports.js';
import { startIgdStub, type IgdStub } from '../support/igd-stub.js';
import { OpenApiValidator } from '../support/openapi-validator.js';
import { promtool } from '../support/promtool.js';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';

const DEVNET = ['devnet.block_time_ms=200', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100'];
const EXTERNAL_IP = '203.0.113.9';
const validator = new OpenApiValidator();

let producer: NodeProcess;
let peerEnode: string;

before(async () => {
  const port = await freePort();
  producer = await startNodeProcess({ sets: [...DEVNET, `devnet.p2p_listen=127.0.0.1:${port}`] });
  peerEnode = formatEnode(nodeIdOf(devnetPeerKey('chain-data-node')), '127.0.0.1', port);
});
after(async () => {
  await producer.stop();
  removeDir(producer.dir);
});

async function networkStatus(node: NodeProcess): Promise<NetworkStatus> {
  const response = await fetch(`${node.baseUrl}/v1/network/status`);
  const text = await response.text();
  const check = validator.check('GET', '/v1/network/status', response.status, response.headers.get('content-type'), text);
  assert.deepEqual(check.problems, [], `the status validates against the OpenAPI document: ${text}`);
  return JSON.parse(text) as NetworkStatus;
}

async function blockNumber(node: NodeProcess): Promise<number> {
  const response = await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }) });
  return Number(BigInt(((await response.json()) as { result: string }).result));
}

/** A discv4 "bootnode" that only listens: it records the endpoint every ping announces. */
async function pingRecorder(): Promise<{ enode: string; froms: { address: string; udpPort: number | null; tcpPort: number | null }[]; close(): void }> {
  const key = secp256k1.utils.randomSecretKey();
  const socket = createSocket('udp4');
  const froms: { address: string; udpPort: number | null; tcpPort: number | null }[] = [];
  socket.on('message', (message) => {
    try {
      const packet = decodeDiscv4(message) as { typename: string; data: { from?: { address: string; udpPort: number | null; tcpPort: number | null } } };
      if (packet.typename === 'ping' && packet.data.from) froms.push(packet.data.from);
    } catch {
      // not a discv4 packet
    }
  });
  const port = await new Promise<number>((resolve) => socket.bind(0, '127.0.0.1', () => resolve(socket.address().port)));
  return { enode: `enode://${Buffer.from(nodeIdOf(key)).toString('hex')}@127.0.0.1:${port}`, froms, close: () => socket.close() };
}

/** Asks the node's discv5 (at 127.0.0.1:`port`) for its own record (FINDNODE distance 0), as any discv5 peer may. */
async function discv5Record(nodeKey: Uint8Array, port: number): Promise<{ ip?: string; udp?: number; tcp?: number }> {
  const clientKey = secp256k1.utils.randomSecretKey();
  const clientPort = await freeUdpPort();
  const clientRecord = SignableENR.createV4(clientKey);
  clientRecord.ip = '127.0.0.1';
  clientRecord.udp = clientPort;
  const client = Discv5.create({
    enr: clientRecord,
    privateKey: privateKeyFromRaw(clientKey) as unknown as Parameters<typeof Discv5.create>[0]['privateKey'],
    bindAddrs: { ip4: multiaddr(`/ip4/127.0.0.1/udp/${clientPort}`) },
    config: { requestTimeout: 2000 },
  });
  await client.start();
  try {
    // The contact: the node's key at the loopback address it is bound to (what it announces is what we read back).
    const contact = SignableENR.createV4(nodeKey);
    contact.ip = '127.0.0.1';
    contact.udp = port;
    const [record] = await client.sendFindNode(contact.toENR(), [0]);
    assert.ok(record, 'the node answered FINDNODE 0 with its record');
    return { ip: record.ip, udp: record.udp, tcp: record.tcp };
  } finally {
    await client.stop();
  }
}

async function startNatNode(t: { after(fn: () => Promise<void>): void }, igd: IgdStub, extra: string): Promise<{ node: NodeProcess; listenerPort: number; discoveryPort: number }> {
  const [listenerPort, discoveryPort] = [await freePort(), await freeUdpPort()];
  const node = await startNodeProcess({
    toml: `[sources.live]\nkind = "p2p"\ntrusted_peers = ["${peerEnode}"]\nlistener_port = ${listenerPort}\ndiscovery_port = ${discoveryPort}\n`
      + `enable_discv5 = true\ndiscv5_port = 0\nnat = "upnp:${igd.descriptionUrl}"\npoll_interval_ms = 100\nbackoff_max_ms = 1000\n${extra}[finality]\nkind = "devnet"\n`,
    sets: DEVNET, readyTimeoutMs: 60_000,
  });
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  return { node, listenerPort, discoveryPort };
}

test('nat = "upnp:<url>": ports mapped, 203.0.113.9 announced in discv4 and discv5, renewed, removed on SIGTERM', async (t) => {
  const igd = await startIgdStub(EXTERNAL_IP);
  t.after(() => igd.close());
  const bootnode = await pingRecorder();
  t.after(() => bootnode.close());
  const { node, listenerPort, discoveryPort } = await startNatNode(t, igd, `discv4_bootnodes = ["${bootnode.enode}"]\nnat_lease_seconds = 2\n`);

  await waitUntil(node, async () => (await networkStatus(node)).network.nat?.state === 'mapped', 30_000);
  const nat = (await networkStatus(node)).network.nat!;
  assert.equal(nat.mode, 'upnp');
  assert.equal(nat.gateway, 'upnp');
  assert.equal(nat.externalAddress, EXTERNAL_IP);
  assert.equal(nat.leaseSeconds, 2);
  const byPurpose = Object.fromEntries(nat.mappings.map((m) => [m.purpose, m]));
  assert.deepEqual(Object.keys(byPurpose).sort(), ['discv4', 'discv5', 'rlpx']);
  assert.deepEqual([byPurpose.rlpx!.protocol, byPurpose.rlpx!.internalPort, byPurpose.rlpx!.externalPort], ['tcp', listenerPort, listenerPort]);
  assert.deepEqual([byPurpose.discv4!.protocol, byPurpose.discv4!.internalPort, byPurpose.discv4!.externalPort], ['udp', discoveryPort, discoveryPort]);
  const discv5Port = byPurpose.discv5!.internalPort;
  assert.ok(discv5Port > 0 && byPurpose.discv5!.protocol === 'udp', 'discv5_port = 0 maps the UDP port actually bound');

  // What the gateway was asked: each port for the 2 s lease, to this host's address toward it.
  const adds = () => igd.calls.filter((c) => c.action === 'AddPortMapping');
  const asked = new Set(adds().map((c) => `${c.args.NewProtocol} ${c.args.NewExternalPort}→${c.args.NewInternalClient}:${c.args.NewInternalPort} lease ${c.args.NewLeaseDuration}`));
  for (const line of [`TCP ${listenerPort}→127.0.0.1:${listenerPort} lease 2`, `UDP ${discoveryPort}→127.0.0.1:${discoveryPort} lease 2`, `UDP ${discv5Port}→127.0.0.1:${discv5Port} lease 2`]) {
    assert.ok(asked.has(line), `${line} in ${[...asked].join(', ')}`);
  }
  assert.ok(igd.calls.some((c) => c.action === 'GetExternalIPAddress'));

  // Announced as extip would: the discv4 ping the bootnode received, and the discv5 record the node answers with.
  await waitUntil(node, async () => bootnode.froms.length > 0, 20_000);
  assert.deepEqual(bootnode.froms[0], { address: EXTERNAL_IP, udpPort: discoveryPort, tcpPort: listenerPort });
  const nodeKey = Uint8Array.from(Buffer.from(readFileSync(join(node.dataDir, 'execution-p2p-secret'), 'utf8').trim(), 'hex'));
  assert.deepEqual(await discv5Record(nodeKey, discv5Port), { ip: EXTERNAL_IP, udp: discv5Port, tcp: listenerPort });

  // Renewed at half the lease: every port asked for again, more than once.
  const renewedAll = () => [listenerPort, discoveryPort, discv5Port].every((port) => adds().filter((c) => c.args.NewExternalPort === String(port)).length >= 3);
  await waitUntil(node, async () => renewedAll(), 20_000);
  const metrics = await (await fetch(`${node.baseUrl}/metrics`)).text();
  assert.match(metrics, /^node_p2p_nat_mapped(\{[^}]*\})? 1$/m);
  assert.match(metrics, /^node_p2p_nat_renewals_total(\{[^}]*\})? [1-9]/m);
  // The nat families pass Prometheus' own exposition lint.
  const natFamilies = metrics.split('\n').filter((line) => /^(# (HELP|TYPE) )?node_p2p_nat_/.test(line)).join('\n') + '\n';
  const lint = await promtool(['check', 'metrics'], natFamilies);
  assert.equal(lint.stdout + lint.stderr, '', 'promtool reports nothing');
  assert.equal(lint.code, 0);
  assert.equal((await (await fetch(`${node.baseUrl}/health/ready`)).status), 200);

  await t.test('/debug/network shows the mapping in headless Chromium', async (sub) => {
    const page = await chromiumPage(sub, `${node.baseUrl}/debug/network`, { width: 1280, height: 1000 });
    if (!page) return;
    await page.waitForFunction(() => (globalThis as unknown as { document: { getElementById(id: string): { textContent: string | null } | null } }).document.getElementById('nat-state')?.textContent === 'upnp / mapped (upnp)');
    const text = async (id: string) => (await page.textContent(`#${id}`))?.trim() ?? '';
    assert.equal(await text('nat-address'), EXTERNAL_IP);
    assert.equal(await text('nat-ports'), `rlpx tcp ${listenerPort}→${listenerPort}, discv4 udp ${discoveryPort}→${discoveryPort}, discv5 udp ${discv5Port}→${discv5Port}`);
    assert.match(await text('nat-next'), /^renewal in \d+ s$|^—$/);
    const shot = join(tmpdir(), 'chain-data-node-debug-network-nat.png');
    await page.screenshot({ path: shot, fullPage: true });
    sub.diagnostic(`screenshot: ${shot}`);
  });

  // SIGTERM: a clean stop removes every mapping at the gateway.
  assert.equal(igd.mappings.size, 3);
  assert.equal(await node.stop('SIGTERM'), 0);
  const deleted = igd.calls.filter((c) => c.action === 'DeletePortMapping').map((c) => `${c.args.NewProtocol} ${c.args.NewExternalPort}`).sort();
  assert.deepEqual(deleted, [`TCP ${listenerPort}`, `UDP ${discoveryPort}`, `UDP ${discv5Port}`].sort());
  assert.equal(igd.mappings.size, 0);
});

test('a gateway that refuses: nat failed and retrying, the lane still follows its peer, readiness holds', async (t) => {
  const igd = await startIgdStub(EXTERNAL_IP);
  t.after(() => igd.close());
  igd.refuse = true;
  // startNatNode waits for /health/ready: readiness does not wait for (or depend on) the mapping.
  const { node } = await startNatNode(t, igd, '');
  await waitUntil(node, async () => (await networkStatus(node)).network.nat?.state === 'failed', 30_000);
  const nat = (await networkStatus(node)).network.nat!;
  assert.equal(nat.externalAddress, null);
  assert.ok(nat.failures >= 1);
  assert.match(nat.lastError ?? '', /UPnP error 501 \(Action Failed\)/);
  assert.ok(nat.lastError!.length <= 200);
  assert.equal(typeof nat.retryInSeconds, 'number');
  assert.deepEqual(nat.mappings, []);
  // The lane keeps following the devnet peer: blocks keep arriving, and readiness holds.
  const at = await blockNumber(node);
  await waitUntil(node, async () => (await blockNumber(node)) > at, 30_000);
  // Ready while the mapping keeps failing. One probe can meet a lane degraded for a moment on a loaded machine (a
  // session dropped and redialled): what must hold is that readiness does not depend on the mapping, so it is read
  // until ready, and a failure names the reasons the node gave.
  let readiness = '';
  await waitUntil(node, async () => {
    const response = await fetch(`${node.baseUrl}/health/ready`);
    readiness = await response.text();
    return response.status === 200;
  }, 30_000).catch((error: unknown) => { throw new Error(`not ready while NAT fails: ${readiness}\n${(error as Error).message}`); });
  const status = await networkStatus(node);
  assert.equal(status.readiness.liveReady, true);
  assert.equal(status.network.supervisor?.state, 'running');
  const metrics = await (await fetch(`${node.baseUrl}/metrics`)).text();
  assert.match(metrics, /^node_p2p_nat_mapped(\{[^}]*\})? 0$/m);
  assert.match(metrics, /^node_p2p_nat_mapping_failures_total\{[^}]*stage="external_ip"[^}]*\} [1-9]/m);
  assert.ok(node.output.some((line) => line.includes('NAT port mapping failed; retrying')), 'the failure is logged');
  // The gateway answers again: a retry maps.
  igd.refuse = false;
  await waitUntil(node, async () => (await networkStatus(node)).network.nat?.state === 'mapped', 30_000);
  assert.equal((await networkStatus(node)).network.nat?.externalAddress, EXTERNAL_IP);
});

/** This host's first non-loopback IPv4 address, or null. */
function lanAddress(): string | null {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) if (address.family === 'IPv4' && !address.internal) return address.address;
  }
  return null;
}

/** Whether a TCP connection to host:port is accepted (a refused or unanswered one is not). */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 5000 });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => { socket.destroy(); resolve(false); });
  });
}

test('nat = "extip:<IPv4>": the RLPx listener takes connections on the host\'s network address (a port forward\'s target); with "none" only on loopback', async (t) => {
  const lan = lanAddress();
  if (lan === null) {
    t.skip('this host has no non-loopback IPv4 address to dial');
    return;
  }
  const listeners: Record<string, number> = {};
  for (const nat of ['extip:203.0.113.9', 'none']) {
    const listenerPort = await freePort();
    listeners[nat] = listenerPort;
    const node = await startNodeProcess({
      toml: `[sources.live]\nkind = "p2p"\ntrusted_peers = ["${peerEnode}"]\nlistener_port = ${listenerPort}\nnat = "${nat}"\npoll_interval_ms = 100\n[finality]\nkind = "devnet"\n`,
      sets: DEVNET, readyTimeoutMs: 60_000,
    });
    t.after(async () => { await node.stop(); removeDir(node.dir); });
    assert.equal(await accepts('127.0.0.1', listenerPort), true, `${nat}: loopback`);
    assert.equal(await accepts(lan, listenerPort), nat !== 'none', `${nat}: ${lan}`);
  }
  t.diagnostic(`dialled ${lan}: ${JSON.stringify(listeners)}`);
});
