/**
 * finality.kind = "consensus_p2p" end to end with the real node on the devnet: the devnet serves its light-client
 * data as a libp2p peer (devnet.beacon_p2p); the finality lane finds it through its discv5 record's `eth2` entry (the
 * default bootnode on the devnet), bootstraps from the documented genesis checkpoint over Req/Resp and follows the
 * finality update gossip: `finalized` frames on /stream, /health/ready 200. With a checkpoint no peer can prove,
 * readiness stays 503 naming it. Without the checkpoint keys start-up is refused naming both.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { freePort } from '../support/ports.js';
import { PROJECT_ROOT } from '../support/paths.js';
import { removeDir, runCli, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';

const DEVNET_CHECKPOINT = '0x09b0f1635ea8c671af3ba22f56bc2c58e66cb9925c5038a3ae20a9b850710b45';
const FAST = ['devnet.block_time_ms=150', 'devnet.reorg_every=0', 'devnet.finality_lag=4', 'finality.poll_interval_ms=500', 'finality.discovery_port=0', 'finality.p2p_port=0'];

async function consensusNode(root: string, waitReady: boolean): Promise<NodeProcess> {
  const port = await freePort();
  return startNodeProcess({
    sets: [...FAST, `devnet.beacon_p2p=127.0.0.1:${port}`, 'finality.kind=consensus_p2p', `finality.checkpoint_root=${root}`, 'finality.checkpoint_slot=0'],
    waitReady,
  });
}

interface Ready { status: string; reasons: string[] }
const ready = async (node: NodeProcess) => (await (await fetch(`${node.baseUrl}/health/ready`)).json()) as Ready;

test('consensus_p2p from the devnet peer: ready once verified, finalized changes on /stream from gossiped updates', async (t) => {
  const node = await consensusNode(DEVNET_CHECKPOINT, true);
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  const finalized: Array<{ finality: string; block: { number: number } | null }> = [];
  await new Promise<void>((resolve, reject) => {
    const source = new EventSource(`${node.baseUrl}/v1/processors/blobs/stream`);
    const timer = setTimeout(() => { source.close(); reject(new Error(`no gossiped finality after ${finalized.length} finalized changes:\n${node.output.join('\n')}`)); }, 60_000);
    source.addEventListener('finalized', (event) => {
      finalized.push(JSON.parse(event.data));
      // Past the Req/Resp bootstrap round: a later finalized change that came from a gossiped update.
      if (node.output.some((line) => /light-client verified slot \d+ \(event\)/.test(line))) {
        clearTimeout(timer);
        source.close();
        resolve();
      }
    });
  });
  assert.equal(finalized.at(-1)!.finality, 'finalized');
  assert.ok(node.output.some((line) => line.includes('consensus peer connected')), 'a libp2p peer was found and connected');
  assert.ok(node.output.some((line) => line.includes('devnet consensus p2p peer listening')));
  assert.equal((await fetch(`${node.baseUrl}/health/ready`)).status, 200);
});

test('consensus_p2p readiness stays down, naming the checkpoint, while no peer serves a bootstrap that verifies', async (t) => {
  const wrong = `0x${'34'.repeat(32)}`;
  const node = await consensusNode(wrong, false);
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  await waitUntil(node, async () => {
    const body = await ready(node);
    return body.status === 'not_ready' && body.reasons.some((r) => r.includes(`no endpoint served a bootstrap that verifies against checkpoint ${wrong}`) && r.includes(`has no light-client bootstrap for ${wrong}`));
  }, 60_000);
  assert.equal((await fetch(`${node.baseUrl}/health/ready`)).status, 503);
  assert.ok(node.output.some((line) => line.includes('consensus peer connected')), 'the peer is there; its answer is what is missing');
});

test('consensus_p2p without the checkpoint is refused at start naming finality.checkpoint_root and finality.checkpoint_slot', async () => {
  const result = await runCli(['start', '--config', join(PROJECT_ROOT, 'config.example.toml'), '--set', 'finality.kind=consensus_p2p', '--set', `finality.checkpoint_root=${DEVNET_CHECKPOINT}`]);
  assert.notEqual(result.code, 0);
  const text = result.stdout + result.stderr;
  assert.match(text, /finality\.checkpoint_slot/);
  assert.match(text, /finality\.checkpoint_root/);
  const neither = await runCli(['start', '--config', join(PROJECT_ROOT, 'config.example.toml'), '--set', 'finality.kind=consensus_p2p']);
  assert.notEqual(neither.code, 0);
  assert.match(neither.stdout + neither.stderr, /missing: finality\.checkpoint_root and finality\.checkpoint_slot/);
});
