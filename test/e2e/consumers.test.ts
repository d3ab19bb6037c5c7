import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { encodeCursor } from '../../store/cursor.js';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { ConsumerClient, consumerBody } from './consumer-client.js';
import { damagedToken } from '../support/tokens.js';

const FAST = ['devnet.block_time_ms=100', 'devnet.reorg_every=8', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100'];
const CHAIN_ID = 1337;

async function storeEpoch(node: NodeProcess): Promise<bigint> {
  const live = await (await fetch(`${node.baseUrl}/health/live`)).json() as { store: { epoch: string } };
  return BigInt(`0x${live.store.epoch}`);
}

async function changeHead(node: NodeProcess): Promise<{ sequence: string; cursor: string | null }> {
  return await (await fetch(`${node.baseUrl}/v1/processors/blobs/changes/head`)).json() as { sequence: string; cursor: string | null };
}

/** A valid cursor with its format version byte changed (checksum recomputed, so only the version is wrong). */
function withVersion(cursor: string, version: number): string {
  const bytes = Buffer.from(cursor, 'base64url');
  bytes[0] = version;
  createHash('sha256').update(bytes.subarray(0, bytes.length - 4)).digest().subarray(0, 4).copy(bytes, bytes.length - 4);
  return bytes.toString('base64url');
}

test('durable consumers over HTTP: lifecycle, watermarks, credentials and refused start cursors', async (t) => {
  const node = await startNodeProcess({ sets: FAST });
  let restarted: NodeProcess | null = null;
  t.after(async () => { await node.stop(); await restarted?.stop(); removeDir(node.dir); });
  const client = new ConsumerClient(node.baseUrl);
  await waitUntil(node, async () => BigInt((await changeHead(node)).sequence) >= 30n, 60_000);

  await t.test('create, get, list and delete; a duplicate id is 409 and a bad body 400 naming the field', async () => {
    const created = await client.create(consumerBody('life', 'life-credential-000001', { position: 'earliest_retained' }, 'best_effort', 30));
    assert.equal(created.status, 201);
    assert.equal(created.body.role, 'best_effort');
    assert.equal(created.body.delivered.sequence, '0');
    assert.equal(created.body.lease.active, true);
    assert.ok(!JSON.stringify(created.body).includes('life-credential-000001'), 'the credential is never echoed');
    assert.equal((await client.create(consumerBody('life', 'life-credential-000001'))).status, 409);
    assert.equal((await client.get('life')).body.id, 'life');
    assert.deepEqual((await client.list()).body.data.map((c) => c.id), ['life']);
    const bad = await client.create({ ...consumerBody('bad', 'short'), role: 'sometimes' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'invalid_request');
    assert.deepEqual((bad.body.error.details!.issues as Array<{ field: string }>).map((i) => i.field).sort(), ['credential', 'role']);
    assert.equal((await client.create(consumerBody('nocursor', 'nocursor-credential-01', { position: 'cursor' }))).status, 400);
    assert.equal((await client.remove('life')).status, 204);
    assert.equal((await client.get('life')).status, 404);
    assert.equal((await client.remove('life')).status, 404);
  });

  await t.test('changes come after the delivered watermark and advance it; ack is monotonic, idempotent and bounded by delivery', async () => {
    const secret = 'flow-credential-000001';
    assert.equal((await client.create(consumerBody('flow', secret))).status, 201);
    const first = await client.changes('flow', secret, 5);
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.data.map((e) => e.sequence), ['1', '2', '3', '4', '5']);
    assert.equal(first.body.nextCursor, first.body.data[4]!.cursor);
    assert.equal(first.body.consumer.delivered.sequence, '5');
    assert.equal(first.body.consumer.acknowledged.sequence, '0');
    const second = await client.changes('flow', secret, 5);
    assert.deepEqual(second.body.data.map((e) => e.sequence), ['6', '7', '8', '9', '10']);

    const beyond = await client.ack('flow', secret, encodeCursor({ epoch: await storeEpoch(node), chainId: CHAIN_ID, instance: 'blobs', sequence: 11n }));
    assert.equal(beyond.status, 400, 'a cursor beyond the highest delivered change is rejected');
    assert.equal(beyond.body.error.code, 'cursor_invalid');
    assert.equal(beyond.body.error.details!.deliveredSequence, '10');

    const acked = await client.ack('flow', secret, second.body.data[2]!.cursor);
    assert.equal(acked.status, 200);
    assert.equal(acked.body.acknowledged.sequence, '8');
    assert.equal(acked.body.acknowledged.cursor, second.body.data[2]!.cursor);
    const again = await client.ack('flow', secret, second.body.data[2]!.cursor);
    assert.equal(again.status, 200, 'acknowledging the same cursor again is idempotent');
    assert.equal(again.body.acknowledged.sequence, '8');
    const older = await client.ack('flow', secret, first.body.data[1]!.cursor);
    assert.equal(older.status, 200);
    assert.equal(older.body.acknowledged.sequence, '8', 'an older acknowledgement never moves the watermark back');

    const redelivered = await client.lease('flow', secret, true);
    assert.equal(redelivered.body.delivered.sequence, '8', 'redelivery moves the delivered watermark back to the acknowledged one');
    const replay = await client.changes('flow', secret, 3);
    assert.deepEqual(replay.body.data.map((e) => e.sequence), ['9', '10', '11']);

    const foreign = await client.ack('flow', secret, encodeCursor({ epoch: await storeEpoch(node), chainId: CHAIN_ID, instance: 'other', sequence: 1n }));
    assert.equal(foreign.status, 410);
    assert.equal(foreign.body.error.code, 'reset_required');
  });

  await t.test('consumer-scoped calls need that consumer\'s credential: none is 401, a wrong or another consumer\'s is 403', async () => {
    const [a, b] = ['cred-a-secret-0000001', 'cred-b-secret-0000001'];
    assert.equal((await client.create(consumerBody('ca', a))).status, 201);
    assert.equal((await client.create(consumerBody('cb', b))).status, 201);
    const own = await client.changes('ca', a, 2);
    assert.equal(own.status, 200);
    const missing = await client.changes('ca', undefined, 2);
    assert.equal(missing.status, 401);
    assert.equal(missing.body.error.code, 'unauthorized');
    for (const [what, call] of [
      ['wrong credential on changes', () => client.changes('ca', 'not-the-right-secret', 2)],
      ['other consumer credential on changes', () => client.changes('ca', b, 2)],
      ['other consumer credential on ack', () => client.ack('ca', b, own.body.data[0]!.cursor)],
      ['other consumer credential on lease', () => client.lease('ca', b)],
      ['other consumer credential on get', () => client.get('ca', b)],
      ['other consumer credential on delete', () => client.remove('ca', b)],
    ] as const) {
      const reply = await call();
      assert.equal(reply.status, 403, what);
      assert.equal((reply.body as { error: { code: string } }).error.code, 'forbidden', what);
    }
    const state = await client.get('ca', a);
    assert.equal(state.body.delivered.sequence, '2', 'refused calls changed nothing');
    assert.equal(state.body.acknowledged.sequence, '0');
  });

  await t.test('a start cursor of another store, chain, instance, format or beyond the head answers reset_required and creates nothing', async () => {
    const epoch = await storeEpoch(node);
    const head = await changeHead(node);
    const own = head.cursor!;
    const cases: Array<[string, string]> = [
      ['another store epoch', encodeCursor({ epoch: epoch ^ 1n, chainId: CHAIN_ID, instance: 'blobs', sequence: 3n })],
      ['another chain', encodeCursor({ epoch, chainId: 1, instance: 'blobs', sequence: 3n })],
      ['another processor instance', encodeCursor({ epoch, chainId: CHAIN_ID, instance: 'blobs-v2', sequence: 3n })],
      ['an incompatible format version', withVersion(own, 2)],
      ['a sequence this store never wrote', encodeCursor({ epoch, chainId: CHAIN_ID, instance: 'blobs', sequence: BigInt(head.sequence) + 1000n })],
    ];
    for (const [what, cursor] of cases) {
      const reply = await client.create(consumerBody('foreign', 'foreign-credential-001', { position: 'cursor', cursor }));
      assert.equal(reply.status, 410, what);
      assert.equal(reply.body.error.code, 'reset_required', what);
      assert.equal((await client.get('foreign')).status, 404, `${what}: no consumer was created`);
    }
    const damaged = await client.create(consumerBody('foreign', 'foreign-credential-001', { position: 'cursor', cursor: damagedToken(own) }));
    assert.equal(damaged.status, 400);
    assert.equal(damaged.body.error.code, 'cursor_invalid');
  });

  await t.test('start at a cursor or at the current head', async () => {
    const head = await changeHead(node);
    const fromCursor = await client.create(consumerBody('at-cursor', 'at-cursor-credential-01', { position: 'cursor', cursor: head.cursor }));
    assert.equal(fromCursor.status, 201);
    assert.equal(fromCursor.body.delivered.sequence, head.sequence);
    assert.equal(fromCursor.body.acknowledged.cursor, head.cursor);
    await waitUntil(node, async () => BigInt((await changeHead(node)).sequence) > BigInt(head.sequence), 60_000);
    const next = await client.changes('at-cursor', 'at-cursor-credential-01', 1);
    assert.equal(next.body.data[0]!.sequence, (BigInt(head.sequence) + 1n).toString());
    const atHead = await client.create(consumerBody('at-head', 'at-head-credential-001', { position: 'current_head' }));
    assert.ok(BigInt(atHead.body.delivered.sequence) >= BigInt(head.sequence));
  });

  await t.test('a call after the lease lapsed starts a new session: delivery resumes right after the acknowledged change', async () => {
    const secret = 'lapse-credential-00001';
    assert.equal((await client.create(consumerBody('lapse', secret, { position: 'earliest_retained' }, 'required', 1))).status, 201);
    const batch = await client.changes('lapse', secret, 5);
    assert.equal((await client.ack('lapse', secret, batch.body.data[1]!.cursor)).status, 200);
    // leaseTtlSeconds = 1: wait for the lease to lapse (reading the consumer does not renew it).
    await waitUntil(node, async () => (await client.get('lapse')).body.lease.active === false, 60_000);
    const resumed = await client.changes('lapse', secret, 2);
    assert.deepEqual(resumed.body.data.map((e) => e.sequence), ['3', '4'], 'the unacknowledged changes 3..5 are delivered again');
    assert.equal(resumed.body.consumer.lease.active, true, 'the call renewed the lease');
  });

  await t.test('consumers and watermarks survive a restart', async () => {
    const before = (await client.get('flow')).body;
    await node.stop('SIGTERM');
    const again = await startNodeProcess({ dir: node.dir, sets: FAST });
    restarted = again;
    const after = await new ConsumerClient(again.baseUrl).get('flow', 'flow-credential-000001');
    assert.equal(after.status, 200);
    assert.deepEqual(after.body.delivered, before.delivered);
    assert.deepEqual(after.body.acknowledged, before.acknowledged);
    const next = await new ConsumerClient(again.baseUrl).changes('flow', 'flow-credential-000001', 1);
    assert.equal(next.body.data[0]!.sequence, (BigInt(before.delivered.sequence) + 1n).toString());
  });
});
