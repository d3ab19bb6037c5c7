import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventSource } from 'eventsource';
import { headSequence, removeDir, runCli, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { ConsumerClient, consumerBody, type Envelope } from './consumer-client.js';

const FAST = ['devnet.block_time_ms=100', 'devnet.reorg_every=8', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'runtime.pool_threads=1'];

async function changes(node: NodeProcess, after: string | null, limit = 100): Promise<{ status: number; body: { data: Envelope[]; error?: { code: string; details?: Record<string, unknown> } } }> {
  const response = await fetch(`${node.baseUrl}/v1/processors/blobs/changes?limit=${limit}${after ? `&after=${after}` : ''}`);
  return { status: response.status, body: await response.json() as { data: Envelope[]; error?: { code: string } } };
}

/** The first frame after `hello` on /stream?after=… (the stream then ends for a reset). */
function firstStreamEvent(url: string): Promise<{ event: string; data: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const source = new EventSource(url);
    const timer = setTimeout(() => { source.close(); reject(new Error('no stream event')); }, 60_000);
    for (const name of ['apply', 'undo', 'finalized', 'reset_required']) {
      source.addEventListener(name, (event) => {
        clearTimeout(timer);
        source.close();
        resolve({ event: name, data: JSON.parse(event.data) as Record<string, unknown> });
      });
    }
  });
}

test('db prune-changes keeps what active required leases need; a pruned cursor is 410 cursor_expired on /changes and reset_required on /stream', async (t) => {
  let node = await startNodeProcess({ sets: FAST });
  const dir = node.dir;
  t.after(async () => { await node.stop(); removeDir(dir); });
  await waitUntil(node, async () => (await headSequence(node)) >= 40, 60_000);
  const log = (await changes(node, null, 40)).body.data;
  const cursorAt = (sequence: number) => log[sequence - 1]!.cursor;

  const client = new ConsumerClient(node.baseUrl);
  // The holder's lease must outlast everything up to the offline prune, however slow the machine.
  assert.equal((await client.create(consumerBody('holder', 'holder-credential-0001', undefined, 'required', 3600))).status, 201);
  assert.equal((await client.changes('holder', 'holder-credential-0001', 30)).status, 200);
  assert.equal((await client.ack('holder', 'holder-credential-0001', cursorAt(20))).body.acknowledged.sequence, '20');
  assert.equal((await client.create(consumerBody('loose', 'loose-credential-00001', { position: 'earliest_retained' }, 'best_effort'))).status, 201);
  assert.equal((await client.create(consumerBody('lapsed', 'lapsed-credential-0001', { position: 'earliest_retained' }, 'required', 1))).status, 201);
  // Its one-second lease must have lapsed before pruning: wait for that, not for a guessed delay.
  await waitUntil(node, async () => (await client.get('lapsed')).body.lease.active === false, 60_000);

  const locked = await runCli(['db', 'prune-changes', '--data-dir', node.dataDir]);
  assert.equal(locked.code, 1, 'pruning refuses while the node holds the data directory');
  assert.match(locked.stderr, /lock/i);

  await node.stop('SIGTERM');
  const pruned = await runCli(['db', 'prune-changes', '--data-dir', node.dataDir]);
  assert.equal(pruned.code, 0, pruned.stderr);
  const report = JSON.parse(pruned.stdout) as { processors: Array<{ instance: string; tailBefore: string; tailAfter: string; removed: number; leaseFloor: string }> };
  const blobs = report.processors.find((p) => p.instance === 'blobs')!;
  assert.equal(blobs.tailBefore, '1');
  assert.equal(blobs.leaseFloor, '21', 'only the active required lease holds pruning back (not the best-effort or the lapsed one)');
  assert.equal(blobs.tailAfter, '21');
  assert.equal(blobs.removed, 20);
  const verified = await runCli(['db', 'verify', '--data-dir', node.dataDir]);
  assert.equal(verified.code, 0, `a pruned store still verifies (consumers included): ${verified.stdout}`);
  assert.match(verified.stdout, /"name": "consumers"/);

  node = await startNodeProcess({ dir, sets: FAST });
  const expired = await changes(node, cursorAt(5));
  assert.equal(expired.status, 410);
  assert.equal(expired.body.error!.code, 'cursor_expired');
  const resumed = await changes(node, cursorAt(20), 5);
  assert.equal(resumed.status, 200, 'the change right after the lease floor is still there');
  assert.equal(resumed.body.data[0]!.sequence, '21');
  const reset = await firstStreamEvent(`${node.baseUrl}/v1/processors/blobs/stream?after=${cursorAt(5)}`);
  assert.equal(reset.event, 'reset_required', 'a pruned cursor ends the stream with reset_required');
  assert.ok('coverage' in reset.data);

  const after = new ConsumerClient(node.baseUrl);
  const holder = await after.lease('holder', 'holder-credential-0001', true);
  assert.equal(holder.status, 200);
  assert.equal((await after.changes('holder', 'holder-credential-0001', 1)).body.data[0]!.sequence, '21', 'the lease holder resumes right after its acknowledgement');
  for (const [id, secret] of [['loose', 'loose-credential-00001'], ['lapsed', 'lapsed-credential-0001']] as const) {
    const reply = await after.changes(id, secret, 1);
    assert.equal(reply.status, 410, `${id}: its changes were pruned`);
    assert.equal(reply.body.error.code, 'cursor_expired');
  }
  const stale = await after.create(consumerBody('stale', 'stale-credential-00001', { position: 'cursor', cursor: cursorAt(5) }));
  assert.equal(stale.status, 410);
  assert.equal(stale.body.error.code, 'reset_required', 'creating a consumer at a pruned cursor never substitutes another position');
  const earliest = await after.create(consumerBody('fresh', 'fresh-credential-00001'));
  assert.equal(earliest.body.delivered.sequence, '20', 'earliest_retained now starts right before the retained tail');
});

test('the configured retain_changes window trims the log while the node runs, held back by an active required lease', async (t) => {
  const toml = '[retention]\nprune_interval_seconds = 1\n\n[[processors]]\nid = "blobs"\nkind = "blobs"\nretain_changes = 15\n';
  const node = await startNodeProcess({ toml, sets: FAST });
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  const client = new ConsumerClient(node.baseUrl);
  const created = await client.create(consumerBody('slow', 'slow-credential-000001'));
  assert.equal(created.status, 201);
  const start = Number(created.body.delivered.sequence);
  await waitUntil(node, async () => (await headSequence(node)) >= start + 40, 60_000);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const held = await changes(node, null, 1);
  assert.equal(held.body.data[0]!.sequence, String(start + 1), 'nothing the lease holder has not acknowledged is pruned');
  const batch = await client.changes('slow', 'slow-credential-000001', 30);
  assert.equal((await client.ack('slow', 'slow-credential-000001', batch.body.data[29]!.cursor)).status, 200);
  const acknowledged = start + 30;
  await waitUntil(node, async () => Number((await changes(node, null, 1)).body.data[0]!.sequence) === acknowledged + 1, 60_000);
  await client.remove('slow');
  await waitUntil(node, async () => {
    const [head, tail] = [await headSequence(node), Number((await changes(node, null, 1)).body.data[0]!.sequence)];
    return tail > acknowledged + 1 && head - tail + 1 <= 15 + 60;
  }, 30_000);
  const metrics = await (await fetch(`${node.baseUrl}/metrics`)).text();
  assert.match(metrics, /chain_node_change_log_pruned_total\{instance="blobs"[^}]*\} [1-9]\d*/);
});
