/**
 * Backfill subscriptions are not a scarce resource (issue 28, point 2), against the real node: far more live at once
 * than the 32 an earlier layout (8 named LMDB tables per stream, 512 in all) allowed, each stream readable by its own
 * consumer, `db verify` clean with them all live, and deleting them leaves the store's tables exactly as they were.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, runCli, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { admin, coverage, FAST } from './history-support.js';

const SUBS = '/admin/v1/backfill-subscriptions';
const COUNT = 100;

const TOML = [
  '[history]', 'chunk_blocks = 4',
  '[[sources.history]]', 'id = "devnet"', 'kind = "devnet"',
  '[[processors]]', 'id = "app"', 'kind = "blobs"', 'history_mode = "on_demand"', 'history_control = "application_subscriptions"', '',
].join('\n');

interface Subscription { id: string; state: string; consumer: { id: string; credential?: string } }

async function tables(dataDir: string): Promise<string[]> {
  const inspect = await runCli(['db', 'inspect', '--data-dir', dataDir]);
  assert.equal(inspect.code, 0, inspect.stderr);
  return (JSON.parse(inspect.stdout) as { tables: Array<{ name: string }> }).tables.map((table) => table.name);
}

async function verify(dataDir: string): Promise<void> {
  const verified = await runCli(['db', 'verify', '--data-dir', dataDir]);
  assert.equal(verified.code, 0, `${verified.stdout}\n${verified.stderr}`);
}

async function list(node: NodeProcess): Promise<Subscription[]> {
  const answer = await admin(node, 'GET', SUBS);
  assert.equal(answer.status, 200, JSON.stringify(answer.json));
  return (answer.json as { data: Subscription[] }).data;
}

test(`${COUNT} backfill subscriptions live at once: each stream its consumer's, db verify clean, and deleting them leaves the store's tables as they were`, async (t) => {
  let node = await startNodeProcess({ toml: TOML, sets: FAST });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  await waitUntil(node, async () => ((await coverage(node, 'app')).finalizedThrough ?? -1) >= 12, 60_000);
  const first = (await coverage(node, 'app')).available[0]!.fromBlock;
  assert.equal(await node.stop(), 0);
  const before = await tables(node.dataDir);

  node = await startNodeProcess({ dir: node.dir, toml: TOML, sets: FAST });
  const credentials = new Map<string, string>();
  for (let i = 0; i < COUNT; i += 1) {
    const block = first + (i % 8);
    const answer = await admin(node, 'POST', SUBS, {
      processor: 'app', fromBlock: block, toBlock: block, mode: 'recompute', idempotencyKey: `many-${i}`, source: 'devnet',
      consumer: { id: `c${i}`, credential: `credential-of-consumer-${i}` },
    });
    assert.equal(answer.status, 201, `subscription ${i + 1}: ${JSON.stringify(answer.json)}`);
    credentials.set((answer.json as Subscription).id, `credential-of-consumer-${i}`);
  }
  assert.equal((await list(node)).length, COUNT);
  await waitUntil(node, async () => (await list(node)).every((sub) => sub.state === 'completed'), 180_000);

  // Each consumer reads its own stream: the one block it asked for, once.
  for (const i of [0, 37, COUNT - 1]) {
    const response = await fetch(`${node.baseUrl}/v1/processors/app/consumers/c${i}/changes?limit=100`, { headers: { 'x-node-consumer-credential': `credential-of-consumer-${i}` } });
    assert.equal(response.status, 200, await response.clone().text());
    const puts = ((await response.json()) as { data: Array<{ kind: string; block: { number: number } }> }).data.filter((change) => change.kind === 'blobs.block.put');
    assert.deepEqual(puts.map((change) => change.block.number), [first + (i % 8)], `consumer c${i}`);
  }

  // All live, the node stopped: the store has the same tables as before, and db verify walks every stream.
  assert.equal(await node.stop(), 0);
  assert.deepEqual(await tables(node.dataDir), before, `${COUNT} live streams take no table of their own`);
  await verify(node.dataDir);

  node = await startNodeProcess({ dir: node.dir, toml: TOML, sets: FAST });
  for (const id of credentials.keys()) {
    const deleted = await admin(node, 'DELETE', `${SUBS}/${id}`);
    assert.equal(deleted.status, 204, JSON.stringify(deleted.json));
  }
  assert.deepEqual(await list(node), []);
  assert.equal(await node.stop(), 0);
  assert.deepEqual(await tables(node.dataDir), before);
  await verify(node.dataDir);
});
