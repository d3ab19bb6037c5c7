/**
 * A consumer application (read a batch, apply it to a local view, acknowledge) against the real
 * node, which is killed with SIGKILL at random moments and restarted, many times in one run.
 * After every restart: acknowledged positions survived, redelivery starts right after the
 * acknowledged change (nothing acknowledged comes back; only the delivered-but-unacknowledged
 * window may), there is no gap, and once caught up the view equals the node's blob query routes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { ConsumerClient, consumerBody, type Envelope } from './consumer-client.js';

const TRIALS = 10;
/**
 * Trials past MIN_TRIALS stop early past this budget so the test stays well inside the runner's
 * 300 s per-test timeout on a machine shared by many processes (a restart can take 10 s there, and
 * the trial running when the budget ends plus the final comparison still follow it); the first
 * MIN_TRIALS always run, however slow the machine (no wall-clock bound decides the outcome).
 */
const BUDGET_MS = 170_000;
const MIN_TRIALS = 5;
const FAST = ['devnet.block_time_ms=100', 'devnet.transactions_per_block=0', 'devnet.blob_transactions_per_block=0', 'devnet.reorg_every=6', 'devnet.reorg_depth=2', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'runtime.shutdown_timeout_seconds=2', 'runtime.pool_threads=1'];
const SECRET = 'crash-consumer-credential';
const BATCH = 25;

interface BlockView { hash: string; finality: string }

/** The application's own store: the view and the last applied sequence, committed together (here: memory that survives node crashes). */
class Application {
  readonly blocks = new Map<number, BlockView>();
  finalizedThrough = -1;
  applied = 0n;
  replayed = 0;

  apply(envelope: Envelope): void {
    const sequence = BigInt(envelope.sequence);
    if (sequence <= this.applied) {
      this.replayed += 1;
      return;
    }
    assert.equal(sequence, this.applied + 1n, `no gap: change ${sequence} follows ${this.applied}`);
    const data = envelope.data as { block?: { blockNumber: number; blockHash: string; finality: string } } | null;
    if (envelope.operation === 'apply' && envelope.kind === 'blobs.block.put') this.blocks.set(data!.block!.blockNumber, { hash: data!.block!.blockHash, finality: data!.block!.finality });
    if (envelope.operation === 'undo' && envelope.kind === 'blobs.block.delete') {
      assert.equal(this.blocks.get(data!.block!.blockNumber)?.hash, data!.block!.blockHash, 'an undo names the block the view holds');
      this.blocks.delete(data!.block!.blockNumber);
    }
    if (envelope.operation === 'finalized') this.finalizedThrough = Math.max(this.finalizedThrough, envelope.block!.number);
    this.applied = sequence;
  }

  snapshot(): Array<[number, BlockView]> {
    return [...this.blocks.entries()].sort(([a], [b]) => a - b).map(([n, b]) => [n, { hash: b.hash, finality: n <= this.finalizedThrough ? 'finalized' : b.finality }]);
  }
}

/** What the node's acknowledged watermark may be after a crash: the last confirmed ack, or the one in flight. */
interface Acks { confirmed: bigint; inFlight: bigint }

/** One session of the consumer loop until the node goes away (a fetch fails) or `stop` says so; returns when it ends. */
async function consume(client: ConsumerClient, app: Application, acks: Acks, stop: { now: boolean; caughtUp?: () => void }): Promise<void> {
  try {
    const lease = await client.lease('app', SECRET, true);
    assert.equal(lease.status, 200, JSON.stringify(lease.body));
    const acknowledged = BigInt(lease.body.acknowledged.sequence);
    assert.ok(acknowledged >= acks.confirmed, `a confirmed acknowledgement (${acks.confirmed}) survived the crash (node has ${acknowledged})`);
    assert.ok(acknowledged <= acks.inFlight, 'the node never acknowledges more than was sent');
    assert.equal(lease.body.delivered.sequence, lease.body.acknowledged.sequence, 'redelivery restarts at the acknowledged change');
    acks.confirmed = acknowledged;
    let expected = acknowledged + 1n;
    while (!stop.now) {
      const batch = await client.changes('app', SECRET, BATCH);
      assert.equal(batch.status, 200, JSON.stringify(batch.body));
      if (batch.body.data.length === 0) {
        stop.caughtUp?.();
        await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      const first = BigInt(batch.body.data[0]!.sequence);
      assert.equal(first, expected, 'each batch starts right after the previous one');
      assert.ok(first > acks.confirmed, `nothing acknowledged is redelivered (got ${first}, acknowledged ${acks.confirmed})`);
      for (const envelope of batch.body.data) app.apply(envelope);
      const last = batch.body.data[batch.body.data.length - 1]!;
      expected = BigInt(last.sequence) + 1n;
      acks.inFlight = BigInt(last.sequence);
      const acked = await client.ack('app', SECRET, last.cursor);
      assert.equal(acked.status, 200, JSON.stringify(acked.body));
      acks.confirmed = BigInt(acked.body.acknowledged.sequence);
    }
  } catch (error) {
    if (error instanceof assert.AssertionError) throw error;
    // The node went away mid-call: the session ends; the next one redelivers from the acknowledged change.
  }
}

interface NodeBlock { blockNumber: number; blockHash: string; finality: string }

async function nodeBlocks(base: string, from: number, to: number): Promise<Array<[number, BlockView]>> {
  const rows: Array<[number, BlockView]> = [];
  let cursor: string | null = null;
  do {
    const response: Response = await fetch(`${base}/v1/q/blobs/blocks?fromBlock=${from}&toBlock=${to}&limit=1000&allowPartial=true${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(response.status, 200);
    const page = await response.json() as { data: NodeBlock[]; nextCursor: string | null };
    for (const row of page.data) rows.push([row.blockNumber, { hash: row.blockHash, finality: row.finality }]);
    cursor = page.nextCursor;
  } while (cursor);
  return rows;
}

async function headSequence(base: string): Promise<bigint> {
  return BigInt(((await (await fetch(`${base}/v1/processors/blobs/changes/head`)).json()) as { sequence: string }).sequence);
}

/** Catches up, then compares the view with the node at a moment no change committed (retried while blocks keep coming). */
async function assertViewEqualsNode(node: NodeProcess, client: ConsumerClient, app: Application, acks: Acks): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const stop = { now: false, caughtUp: () => { stop.now = true; } };
    await consume(client, app, acks, stop);
    const before = await headSequence(node.baseUrl);
    if (before !== app.applied) continue;
    const view = app.snapshot();
    const tip = view.length === 0 ? -1 : view[view.length - 1]![0];
    const rows = view.length === 0 ? [] : await nodeBlocks(node.baseUrl, view[0]![0], tip);
    const beyond = await nodeBlocks(node.baseUrl, tip + 1, tip + 1);
    if ((await headSequence(node.baseUrl)) !== before) continue;
    assert.deepEqual(beyond, [], 'the node holds no block the view lacks');
    assert.deepEqual(view, rows, 'the application view equals the node state');
    return;
  }
  assert.fail('the node never stood still long enough to compare');
}

test(`a consumer loop survives up to ${TRIALS} kill -9 restarts: acknowledged work is never redelivered and the view equals the node`, async (t) => {
  let node = await startNodeProcess({ sets: FAST });
  const dir = node.dir;
  t.after(async () => { await node.stop('SIGKILL'); removeDir(dir); });
  await waitUntil(node, async () => (await headSequence(node.baseUrl)) > 10n, 60_000);
  assert.equal((await new ConsumerClient(node.baseUrl).create(consumerBody('app', SECRET, { position: 'earliest_retained' }, 'required', 120))).status, 201);

  const app = new Application();
  const acks: Acks = { confirmed: 0n, inFlight: 0n };
  let killsMidBatch = 0;
  let trials = 0;
  const started = Date.now();
  for (let trial = 1; trial <= TRIALS && (trial <= MIN_TRIALS || Date.now() - started < BUDGET_MS); trial += 1) {
    trials = trial;
    const client = new ConsumerClient(node.baseUrl);
    await assertViewEqualsNode(node, client, app, acks);
    const stop = { now: false };
    const session = consume(client, app, acks, stop);
    await new Promise((resolve) => setTimeout(resolve, 100 + Math.floor(Math.random() * 900)));
    if (acks.inFlight !== acks.confirmed) killsMidBatch += 1;
    await node.stop('SIGKILL');
    await session;
    node = await startNodeProcess({ dir, sets: FAST, waitReady: false });
    await waitUntil(node, async () => (await fetch(`${node.baseUrl}/v1/processors/blobs/consumers/app`)).status === 200, 60_000);
    // Prefer killing while blocks are committing: give the restarted node up to 3 s to produce again.
    const resumedFrom = await headSequence(node.baseUrl);
    const resumeBy = Date.now() + 3000;
    while (Date.now() < resumeBy && (await headSequence(node.baseUrl)) <= resumedFrom) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await assertViewEqualsNode(node, new ConsumerClient(node.baseUrl), app, acks);
  t.diagnostic(`applied ${app.applied} changes over ${trials} of ${TRIALS} kills in ${Math.round((Date.now() - started) / 1000)} s (${killsMidBatch} between a delivery and its acknowledgement); ${app.replayed} redelivered unacknowledged changes skipped by sequence`);
  assert.ok(app.applied > BigInt(trials * 5), 'changes kept flowing between the kills');
});
