/**
 * p2p with consensus finality: a producer serves the devnet over RLPx (`devnet.p2p_listen`) and its Beacon-API-shaped
 * endpoint (`devnet.beacon_api`); a follower with `[sources.live] kind = "p2p"` and `finality.kind = "beacon_api"`
 * (light-client proof from the devnet's genesis checkpoint) follows the blocks from the peer and the finality from
 * the endpoint: `finalized` changes reach its stream, the finalized block is the producer's, and the peer session
 * was qualified.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventSource } from 'eventsource';
import { devnetPeerKey } from '../../net/devnet/p2p-server.js';
import { formatEnode, nodeIdOf } from '../../net/p2p/enode.js';
import { freePort } from '../support/ports.js';
import { removeDir, startNodeProcess } from '../support/node-process.js';

/** The devnet's genesis beacon block root for the default seed (as in beacon-finality.test.ts). */
const DEVNET_CHECKPOINT = '0x09b0f1635ea8c671af3ba22f56bc2c58e66cb9925c5038a3ae20a9b850710b45';
const FAST = ['devnet.block_time_ms=150', 'devnet.reorg_every=0', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100'];

test('a p2p follower takes its finality from Beacon API light-client proofs', async (t) => {
  const p2pPort = await freePort();
  const beaconPort = await freePort();
  const producer = await startNodeProcess({ sets: [...FAST, `devnet.p2p_listen=127.0.0.1:${p2pPort}`, `devnet.beacon_api=127.0.0.1:${beaconPort}`] });
  t.after(async () => { await producer.stop(); removeDir(producer.dir); });
  const enode = formatEnode(nodeIdOf(devnetPeerKey('chain-data-node')), '127.0.0.1', p2pPort);
  const follower = await startNodeProcess({
    toml: `[sources.live]\nkind = "p2p"\ntrusted_peers = ["${enode}"]\npoll_interval_ms = 100\n[finality]\nkind = "beacon_api"\nurls = ["http://127.0.0.1:${beaconPort}"]\ncheckpoint_root = "${DEVNET_CHECKPOINT}"\nmax_retries = 0\n`,
    sets: FAST,
  });
  t.after(async () => { await follower.stop(); removeDir(follower.dir); });

  const finalized = await new Promise<{ finality: string; block: { number: number; hash: string } }>((resolve, reject) => {
    const source = new EventSource(`${follower.baseUrl}/v1/processors/blobs/stream`);
    const timer = setTimeout(() => { source.close(); reject(new Error('no finalized change on the follower')); }, 90_000);
    source.addEventListener('finalized', (event) => {
      clearTimeout(timer);
      source.close();
      resolve(JSON.parse(event.data));
    });
  });
  assert.equal(finalized.finality, 'finalized');
  assert.ok(follower.output.some((line) => line.includes('light-client verified slot')), 'the finality came from the light client');
  const rpc = async (url: string, n: number) => ((await (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: [`0x${n.toString(16)}`, false] }) })).json()) as { result: { hash: string } | null }).result?.hash;
  assert.equal(await rpc(producer.rpcUrl, finalized.block.number), await rpc(follower.rpcUrl, finalized.block.number));
  const metrics = await (await fetch(`${follower.baseUrl}/metrics`)).text();
  assert.match(metrics, /node_p2p_qualifications_total\{outcome="qualified"[^}]*\} [1-9]/);
  const ready = await fetch(`${follower.baseUrl}/health/ready`);
  assert.equal(ready.status, 200);
});
