/**
 * The devnet on the wire: one node produces the devnet and serves it over RLPx/eth (`[devnet] p2p_listen`); a second
 * node with `[sources.live] kind = "p2p"` follows it with no other source, across the devnet's reorgs, verifying
 * every block, and serves the same chain and the same change stream (undo moves included).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { devnetPeerKey } from '../../net/devnet/p2p-server.js';
import { formatEnode, nodeIdOf } from '../../net/p2p/enode.js';
import { freePort, freeUdpPort } from '../support/ports.js';
import type { NetworkStatus } from '../../api/network-status.js';
import { tmpdir } from 'node:os';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromiumPage } from '../support/chromium.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { buildDnsTree } from '../../net/discovery/dns-tree.js';
import { encodeNodeRecord } from '../../net/discovery/enr.js';
import { startDnsStub } from '../support/dns-stub.js';
import { startDiscv5 } from '../../net/discovery/discv5.js';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { bloomMatches } from '../../net/p2p/log-interest.js';
import { TRANSFER_TOPIC } from '../../actors/kinds/erc20/transfers.js';

/** One of the devnet's tokens (config.example.toml). */
const BLOOM_TOKEN = '0xfa5b17fc3b43b0ecdd27cfa8810a44e52d9a2506';

const DEVNET = ['devnet.block_time_ms=200', 'devnet.transactions_per_block=3', 'devnet.reorg_every=6', 'devnet.reorg_depth=2', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100'];

async function rpc<T>(node: NodeProcess, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return ((await response.json()) as { result: T }).result;
}

const blockNumber = async (node: NodeProcess) => Number(BigInt(await rpc<string>(node, 'eth_blockNumber', [])));
const hashAt = async (node: NodeProcess, n: number) => (await rpc<{ hash: string } | null>(node, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false]))?.hash ?? null;

interface Envelope { operation: string; block: { number: number; hash: string } }
async function changes(node: NodeProcess): Promise<Envelope[]> {
  return ((await (await fetch(`${node.baseUrl}/v1/processors/blobs/changes?limit=1000`)).json()) as { data: Envelope[] }).data;
}

test('a p2p node follows the devnet served over RLPx across reorgs, block for block', async (t) => {
  const port = await freePort();
  const producer = await startNodeProcess({ sets: [...DEVNET, `devnet.p2p_listen=127.0.0.1:${port}`] });
  t.after(async () => { await producer.stop(); removeDir(producer.dir); });
  const enode = formatEnode(nodeIdOf(devnetPeerKey('chain-data-node')), '127.0.0.1', port);
  assert.ok(producer.output.some((line) => line.includes(enode)), 'the producer logs the enode derived from its seed');

  const followerToml = `[sources.live]\nkind = "p2p"\ntrusted_peers = ["${enode}"]\npoll_interval_ms = 100\npeer_recovery_timeout_seconds = 2\n[finality]\nkind = "devnet"\n`;
  const follower = await startNodeProcess({ toml: followerToml, sets: DEVNET });
  t.after(async () => { await follower.stop(); removeDir(follower.dir); });
  // A second follower whose only processor reads one token's Transfer logs: the bloom check before receipts.
  const logFollower = await startNodeProcess({ toml: `${followerToml}[[processors]]\nid = "erc20"\nkind = "erc20"\ntokens = ["${BLOOM_TOKEN}"]\n`, sets: DEVNET });
  t.after(async () => { await logFollower.stop(); removeDir(logFollower.dir); });

  // Follow until the producer has reorganised at least twice and the follower has applied undo moves.
  await waitUntil(follower, async () => (await changes(follower)).filter((c) => c.operation === 'undo').length >= 2, 60_000);
  const target = await blockNumber(producer);
  await waitUntil(follower, async () => (await blockNumber(follower)) >= target, 30_000);

  // Every block up to the producer's finalized range is the same block on both nodes.
  const finalized = target - 4;
  assert.ok(finalized > 10);
  for (let n = 0; n <= finalized; n++) assert.equal(await hashAt(follower, n), await hashAt(producer, n), `block ${n}`);

  // The follower's stream carries the reorgs: undo moves, each followed by the replacement branch.
  const feed = await changes(follower);
  const undone = feed.filter((c) => c.operation === 'undo');
  assert.ok(undone.length >= 2);
  for (const undo of undone) assert.notEqual(await hashAt(follower, undo.block.number), undo.block.hash, `undone block ${undo.block.number} is no longer canonical`);

  const metrics = await (await fetch(`${follower.baseUrl}/metrics`)).text();
  assert.match(metrics, /node_p2p_sessions\{[^}]*\} 1/);
  assert.match(metrics, /node_p2p_qualifications_total\{outcome="qualified"[^}]*\} 1/);
  assert.match(metrics, /node_p2p_bans_total\{[^}]*\} 0/);
  assert.match(metrics, /node_p2p_sessions_established_total\{version="eth\/69"/);

  // The network snapshot (spec §2.10): running supervisor, one trusted session, requests by outcome, no peer identity.
  const statusText = await (await fetch(`${follower.baseUrl}/v1/network/status`)).text();
  const status = JSON.parse(statusText) as NetworkStatus;
  assert.equal(status.readiness.ready, true);
  assert.equal(status.readiness.liveReady, true);
  assert.equal(status.network.source, 'p2p');
  assert.equal(status.network.supervisor?.state, 'running');
  assert.equal(status.network.sessions?.active, 1);
  assert.equal(status.network.sessions?.byVersion['eth/69'], 1);
  assert.equal(status.network.byOrigin?.sessions.trusted, 1);
  assert.equal(status.network.byOrigin?.qualifications.trusted.qualified, 1);
  assert.ok((status.network.materialRequests?.byOutcome['bodies:ok'] ?? 0) > 0);
  assert.ok((status.network.materialRequests?.byOutcome['receipts:ok'] ?? 0) > 0);
  assert.equal(status.storedRangeContiguous, true);
  assert.ok(status.syncTargetBlock !== null && status.syncTargetBlock >= target);
  assert.equal(status.network.managers[0]?.active, true);
  const peerId = enode.slice('enode://'.length, 'enode://'.length + 128);
  assert.ok(!statusText.includes(peerId) && !statusText.includes('127.0.0.1'), 'no peer identity in the snapshot');

  await t.test('a log processor\'s follower asks only for the receipts of blocks whose bloom may hold its logs, and computes the same balances', async () => {
    await waitUntil(logFollower, async () => (await blockNumber(logFollower)) >= target, 30_000);
    const range = { fromBlock: '0x0', toBlock: `0x${finalized.toString(16)}` };
    const transfers = { ...range, address: BLOOM_TOKEN, topics: [TRANSFER_TOPIC] };
    const produced = await rpc<Array<{ blockNumber: string; topics: string[] }>>(producer, 'eth_getLogs', [transfers]);
    assert.ok(produced.length > 0, 'the devnet token has transfers in the range');
    // Every block is recorded and verified; its logs of the token are the producer's, block for block.
    assert.deepEqual(await rpc(logFollower, 'eth_getLogs', [transfers]), produced);
    // Blocks whose bloom rules out the token's Transfer were recorded without receipts.
    const withLogs = new Set(produced.map((log) => Number(BigInt(log.blockNumber))));
    const skipped: number[] = [];
    for (let n = 1; n <= finalized; n++) {
      if (withLogs.has(n)) continue;
      const hash = await hashAt(logFollower, n);
      const header = await rpc<{ logsBloom: string }>(logFollower, 'eth_getBlockByHash', [hash, false]);
      if (bloomMatches({ logsBloom: header.logsBloom as `0x${string}` }, { addresses: [BLOOM_TOKEN], topics: [TRANSFER_TOPIC] })) continue;
      const answer = await (await fetch(logFollower.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockReceipts', [`params`]: [`0x${n.toString(16)}`] }) })).json() as { error?: { message: string } };
      assert.match(answer.error?.message ?? '', /receipts of block \d+ .* not available/, `block ${n}: receipts skipped`);
      skipped.push(n);
    }
    assert.ok(skipped.length > 0, 'some blocks\' blooms rule the token out');
    // Each holder's balance is the sum of the token's Transfers up to the instance's reduce cursor (the follower's own
    // logs, equal to the producer's above): no Transfer in a block without receipts was missed.
    // (The zero address is the mint's source, not a holder: the kind keeps no balance for it.)
    const holders = [...new Set(produced.flatMap((log) => [log.topics[1]!, log.topics[2]!]).map((topic) => `0x${topic.slice(26)}`))].filter((a) => !/^0x0{40}$/.test(a));
    for (const holder of holders.slice(0, 6)) {
      let compared: { served: string | undefined; summed: string; block: number } | null = null;
      await waitUntil(logFollower, async () => {
        const answer = (await (await fetch(`${logFollower.baseUrl}/v1/q/erc20/balances/${BLOOM_TOKEN}/${holder}`)).json()) as { balance: string | null; netChange?: string; coverage: { reduceCursor: { number: number; hash: string } | null } };
        const cursor = answer.coverage.reduceCursor;
        if (!cursor) return false;
        const logs = await rpc<Array<{ topics: string[]; data: string }>>(logFollower, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: `0x${cursor.number.toString(16)}`, address: BLOOM_TOKEN, topics: [TRANSFER_TOPIC] }]);
        if ((await hashAt(logFollower, cursor.number)) !== cursor.hash) return false; // reorganised meanwhile: read again
        const word = (topic: string) => `0x${topic.slice(26)}`;
        const sum = logs.reduce((total, log) => total + (word(log.topics[2]!) === holder ? BigInt(log.data) : 0n) - (word(log.topics[1]!) === holder ? BigInt(log.data) : 0n), 0n);
        compared = { served: answer.balance ?? answer.netChange, summed: sum.toString(), block: cursor.number };
        return true;
      }, 30_000);
      const { served, summed, block } = compared!;
      assert.equal(served, summed, `holder ${holder} at block ${block}`);
    }
  });

  await t.test('/debug/network renders the live numbers in headless Chromium', async (sub) => {
    const page = await chromiumPage(sub, `${follower.baseUrl}/debug/network`, { width: 1280, height: 900 });
    if (!page) return;
    await page.waitForFunction(() => {
      const verdict = (globalThis as unknown as { document: { getElementById(id: string): { textContent: string | null } | null } }).document.getElementById('verdict');
      return verdict?.textContent === 'healthy';
    });
    const text = async (id: string) => (await page.textContent(`#${id}`))?.trim() ?? '';
    assert.equal(await text('source'), 'p2p');
    assert.equal(await text('supervisor-state'), 'running');
    assert.match(await text('sessions'), /^1 \/ 1$/);
    assert.equal(await text('contiguous'), 'true');
    const shown = Number(await text('sync-target'));
    const live = ((await (await fetch(`${follower.baseUrl}/v1/network/status`)).json()) as NetworkStatus).syncTargetBlock!;
    assert.ok(shown >= target && shown <= live, `the page shows the live sync target (${shown}, API ${live})`);
    const trusted = await page.$$eval('#origins tbody tr', (rows) => rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent)).find((cells) => cells[0] === 'trusted'));
    assert.deepEqual(trusted?.slice(2, 4), ['1', '1'], 'one trusted session, qualified');
    assert.ok(Number(await page.$$eval('#requests tbody tr', (rows) => rows.find((row) => row.cells[0]?.textContent === 'bodies:ok')?.cells[1]?.textContent ?? '0')) > 0);
    const shot = join(tmpdir(), 'chain-data-node-debug-network.png');
    await page.screenshot({ path: shot, fullPage: true });
    sub.diagnostic(`screenshot: ${shot}`);
  });

  // The only peer goes away: readiness drops at once and the supervisor shows a supervised retry with a countdown.
  await producer.stop();
  await waitUntil(follower, async () => (await fetch(`${follower.baseUrl}/health/ready`)).status === 503, 30_000);
  await waitUntil(follower, async () => {
    const s = (await (await fetch(`${follower.baseUrl}/v1/network/status`)).json()) as NetworkStatus;
    return s.network.supervisor?.state === 'backing_off' && s.network.supervisor.retryInSeconds !== null && s.network.sessions?.active === 0;
  }, 30_000);
  const down = (await (await fetch(`${follower.baseUrl}/v1/network/status`)).json()) as NetworkStatus;
  assert.equal(down.readiness.liveReady, false);
  assert.ok(down.network.supervisor!.failures > 0);
  assert.ok(Object.values(down.network.sessions?.disconnects ?? {}).reduce((a, b) => a + b, 0) >= 1, 'the lost session is counted by disconnect reason');
  // Zero peers for peer_recovery_timeout_seconds (2 s here) rebuilds the network manager; the old one is a stopped record.
  await waitUntil(follower, async () => {
    const s = (await (await fetch(`${follower.baseUrl}/v1/network/status`)).json()) as NetworkStatus;
    return s.network.managers.some((m) => !m.active && m.phase === 'stopped') && s.network.managers[0]?.active === true && s.network.managers[0].id > 1;
  }, 30_000);
});

test('a p2p node finds the devnet peer through an EIP-1459 DNS tree served from a UDP DNS server on loopback', async (t) => {
  const port = await freePort();
  const producer = await startNodeProcess({ sets: [...DEVNET, `devnet.p2p_listen=127.0.0.1:${port}`] });
  t.after(async () => { await producer.stop(); removeDir(producer.dir); });
  const record = encodeNodeRecord(devnetPeerKey('chain-data-node'), { seq: 1n, ip: '127.0.0.1', tcp: port, udp: port });
  const { url, zone } = buildDnsTree({ records: [record], links: [], privateKey: secp256k1.utils.randomSecretKey(), domain: 'devnet.test', seq: 1 });
  const dns = await startDnsStub(zone);
  t.after(() => dns.close().catch(() => undefined));
  const follower = await startNodeProcess({
    toml: `[sources.live]\nkind = "p2p"\ndns_trees = ["${url}"]\ndns_server = "${dns.address}"\npoll_interval_ms = 100\n[finality]\nkind = "devnet"\n`,
    sets: DEVNET,
  });
  t.after(async () => { await follower.stop(); });
  const target = await blockNumber(producer);
  await waitUntil(follower, async () => (await blockNumber(follower)) >= target, 30_000);
  const status = (await (await fetch(`${follower.baseUrl}/v1/network/status`)).json()) as NetworkStatus;
  assert.equal(status.network.byOrigin?.sessions.dns_tree, 1);
  assert.equal(status.network.byOrigin?.qualifications.dns_tree.qualified, 1);
  assert.ok((status.network.byOrigin?.admissions.dns_tree ?? 0) >= 1);
  assert.equal(status.network.byOrigin?.sessions.trusted, 0);
  assert.ok(dns.queries.includes('devnet.test'), 'the root was resolved through the stub');

  // Restarted with the DNS server gone, the node finds the peer again in its peer store (origin cached_hot).
  await follower.stop();
  await dns.close();
  const again = await startNodeProcess({ dir: follower.dir, sets: DEVNET, toml: readFileSync(follower.configFile, 'utf8') });
  t.after(async () => { await again.stop(); removeDir(again.dir); });
  await waitUntil(again, async () => {
    const s = (await (await fetch(`${again.baseUrl}/v1/network/status`)).json()) as NetworkStatus;
    return s.network.byOrigin?.qualifications.cached_hot.qualified === 1;
  }, 30_000);
});

test('a p2p node finds the devnet peer over discv5 from a bootnode record', async (t) => {
  const port = await freePort();
  const producer = await startNodeProcess({ sets: [...DEVNET, `devnet.p2p_listen=127.0.0.1:${port}`] });
  t.after(async () => { await producer.stop(); removeDir(producer.dir); });
  // The test holds the devnet peer's key, so it runs the peer's discv5 presence: a record naming its RLPx port.
  const presence = await startDiscv5({
    privateKey: devnetPeerKey('chain-data-node'), host: '127.0.0.1', udpPort: await freeUdpPort(), tcpPort: port, bootnodes: [],
    lookupIntervalMs: 60_000, lookupTimeoutMs: 1000, onNode: () => undefined, onError: () => undefined,
  });
  t.after(() => presence.stop());
  const follower = await startNodeProcess({
    toml: `[sources.live]\nkind = "p2p"\nenable_discv5 = true\ndiscv5_bootnodes = ["${presence.enr}"]\npoll_interval_ms = 100\n[finality]\nkind = "devnet"\n`,
    sets: DEVNET,
  });
  t.after(async () => { await follower.stop(); removeDir(follower.dir); });
  const target = await blockNumber(producer);
  await waitUntil(follower, async () => (await blockNumber(follower)) >= target, 30_000);
  const status = (await (await fetch(`${follower.baseUrl}/v1/network/status`)).json()) as NetworkStatus;
  assert.equal(status.network.byOrigin?.sessions.discv4_or_5, 1);
  assert.equal(status.network.byOrigin?.qualifications.discv4_or_5.qualified, 1);
});


test('/v1/network/status on the devnet source reports what applies and says what does not', async (t) => {
  const node = await startNodeProcess({ sets: ['devnet.block_time_ms=200'] });
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  await waitUntil(node, async () => (await blockNumber(node)) >= 3, 20_000);
  const status = (await (await fetch(`${node.baseUrl}/v1/network/status`)).json()) as NetworkStatus;
  assert.equal(status.network.source, 'devnet');
  assert.equal(status.network.applies.peers, false);
  assert.match(status.network.applies.note ?? '', /devnet/);
  assert.equal(status.network.supervisor, null);
  assert.equal(status.network.sessions, null);
  assert.equal(status.readiness.liveReady, true);
  assert.ok(status.syncTargetBlock !== null && status.syncTargetBlock >= 3);
  assert.equal(status.storedRange?.from, 0);
  assert.deepEqual(status.processors, [{ id: 'blobs', pendingDeltas: 0 }]);
  const page = await fetch(`${node.baseUrl}/debug/network`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  const html = await page.text();
  assert.match(html, /\/v1\/network\/status/);
  assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href=/, 'no external assets');
});

test('kind = "p2p" without trusted peers, or with a bad discovery value, is refused at start naming the key', async () => {
  for (const [toml, key] of [
    ['[sources.live]\nkind = "p2p"\n', 'sources.live.trusted_peers'],
    [`[sources.live]\nkind = "p2p"\ntrusted_peers = ["enode://${'ab'.repeat(64)}@127.0.0.1:30303"]\ndiscovery_port = 30303\ndiscv4_bootnodes = ["enode://nope"]\n`, 'sources.live.discv4_bootnodes[0]'],
    [`[sources.live]\nkind = "p2p"\ntrusted_peers = ["enode://${'ab'.repeat(64)}@127.0.0.1:30303"]\n[finality]\nkind = "rpc"\n`, 'finality.kind'],
  ] as const) {
    const node = await startNodeProcess({ toml, waitReady: false });
    const code = await node.exited;
    removeDir(node.dir);
    assert.notEqual(code, 0);
    assert.ok(node.output.some((line) => line.includes(key)), `${key} named in:\n${node.output.join('\n')}`);
  }
});
