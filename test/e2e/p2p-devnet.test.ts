/**
 * The devnet on the wire: one node produces the devnet and serves it over RLPx/eth (`[devnet] p2p_listen`); a second
 * node with `[sources.live] kind = "p2p"` follows it with no other source, across the devnet's reorgs, verifying
 * every block, and serves the same chain and the same change stream (undo moves included).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { devnetPeerKey } from '../../net/devnet/p2p-server.js';
import { formatEnode, nodeIdOf } from '../../net/p2p/enode.js';
import { freePort } from '../support/ports.js';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';

const DEVNET = ['devnet.block_time_ms=200', 'devnet.reorg_every=6', 'devnet.reorg_depth=2', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100'];

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

  const follower = await startNodeProcess({
    toml: `[sources.live]\nkind = "p2p"\ntrusted_peers = ["${enode}"]\npoll_interval_ms = 100\n[finality]\nkind = "devnet"\n`,
    sets: DEVNET,
  });
  t.after(async () => { await follower.stop(); removeDir(follower.dir); });

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
});

test('kind = "p2p" without trusted peers, or with discovery switched on, is refused at start naming the key', async () => {
  for (const [toml, key] of [
    ['[sources.live]\nkind = "p2p"\n', 'sources.live.trusted_peers'],
    [`[sources.live]\nkind = "p2p"\ntrusted_peers = ["enode://${'ab'.repeat(64)}@127.0.0.1:30303"]\nenable_discv5 = true\n`, 'sources.live.enable_discv5'],
    [`[sources.live]\nkind = "p2p"\ntrusted_peers = ["enode://${'ab'.repeat(64)}@127.0.0.1:30303"]\n[finality]\nkind = "rpc"\n`, 'finality.kind'],
  ] as const) {
    const node = await startNodeProcess({ toml, waitReady: false });
    const code = await node.exited;
    removeDir(node.dir);
    assert.notEqual(code, 0);
    assert.ok(node.output.some((line) => line.includes(key)), `${key} named in:\n${node.output.join('\n')}`);
  }
});
