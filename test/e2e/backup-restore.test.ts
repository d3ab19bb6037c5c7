/**
 * The README's restore drill, step by step, on a real node: back up with `db backup` (refused
 * while the node runs), verify the backup in an isolated data directory, stop the service, move
 * the active database aside, copy the verified backup in, start, and compare coverage, counts,
 * cursors and consumers before dropping the old database.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { changeHead } from '../../store/change-log.js';
import { openStore } from '../../store/store.js';
import { removeDir, runCli, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { ConsumerClient, consumerBody, type Envelope } from './consumer-client.js';

const FAST = ['devnet.block_time_ms=100', 'devnet.reorg_every=8', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100'];
const SECRET = 'drill-credential-000001';

interface Coverage { configuredStartBlock: number; processedThrough: number | null; finalizedThrough: number | null; complete: boolean }

async function json<T>(node: NodeProcess, path: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${node.baseUrl}${path}`);
  return { status: response.status, body: await response.json() as T };
}

const epochOf = async (node: NodeProcess) => (await json<{ store: { epoch: string } }>(node, '/health/live')).body.store.epoch;
const coverageOf = async (node: NodeProcess) => (await json<{ coverage: Coverage }>(node, '/v1/processors/blobs/status')).body.coverage;
const withoutCursor = (envelope: Envelope) => ({ ...envelope, cursor: undefined });

async function inspectCounts(dataDir: string): Promise<Map<string, number>> {
  const inspect = await runCli(['db', 'inspect', '--data-dir', dataDir]);
  assert.equal(inspect.code, 0, inspect.stderr);
  return new Map((JSON.parse(inspect.stdout) as { tables: Array<{ name: string; entries: number }> }).tables.map((t) => [t.name, t.entries]));
}

test('restore drill: a verified backup restored in place keeps coverage, counts, changes and consumers, under a new store epoch', async (t) => {
  const original = await startNodeProcess({ sets: FAST });
  const backupDir = mkdtempSync(join(tmpdir(), 'cdn-backup-'));
  let restored: NodeProcess | null = null;
  t.after(async () => {
    await original.stop();
    await restored?.stop();
    removeDir(original.dir);
    removeDir(backupDir);
  });
  const client = new ConsumerClient(original.baseUrl);
  await waitUntil(original, async () => BigInt((await json<{ sequence: string }>(original, '/v1/processors/blobs/changes/head')).body.sequence) >= 30n, 30_000);
  await waitUntil(original, async () => ((await coverageOf(original)).finalizedThrough ?? 0) >= 10, 30_000);

  // What the application holds: a required consumer that read 10 changes and acknowledged 6, and a cursor.
  assert.equal((await client.create(consumerBody('drill', SECRET))).status, 201);
  const batch = await client.changes('drill', SECRET, 10);
  assert.equal(batch.status, 200);
  assert.equal((await client.ack('drill', SECRET, batch.body.data[5]!.cursor)).status, 200);
  const consumerBefore = (await client.get('drill')).body;
  const firstChanges = (await json<{ data: Envelope[] }>(original, '/v1/processors/blobs/changes?limit=20')).body.data;
  const oldCursor = firstChanges[9]!.cursor;
  const finalizedRows = (await json<{ data: unknown[] }>(original, '/v1/q/blobs/blocks?fromBlock=0&toBlock=10')).body.data;
  const epochBefore = await epochOf(original);

  // 1. The backup needs the write lock: refused while the node runs, and nothing is written.
  const target = join(backupDir, 'backup');
  const refused = await runCli(['db', 'backup', target, '--config', original.configFile, '--set', `data_dir=${original.dataDir}`]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /lock/i);
  assert.ok(!existsSync(target), 'nothing written while the node runs');

  // 2. Stop the service; take the backup.
  const coverageBefore = await coverageOf(original);
  assert.equal(await original.stop('SIGTERM'), 0);
  const countsBefore = await inspectCounts(original.dataDir);
  const stopped = openStore({ dataDir: original.dataDir, readOnly: true });
  const headBefore = changeHead(stopped.processor('blobs').changes);
  await stopped.close();
  const backup = await runCli(['db', 'backup', target, '--config', original.configFile, '--set', `data_dir=${original.dataDir}`]);
  assert.equal(backup.code, 0, backup.stderr);
  const report = JSON.parse(backup.stdout) as { sourceEpoch: string; storeEpoch: string; verified: boolean; sizeBytes: number; rotation: { changes: number; consumers: number } };
  assert.equal(report.sourceEpoch, epochBefore);
  assert.notEqual(report.storeEpoch, epochBefore, 'the backup is a new store with its own epoch');
  assert.equal(report.verified, true);
  assert.equal(report.rotation.consumers, 1);
  assert.equal(BigInt(report.rotation.changes), headBefore, 'every change of the log (none pruned) now names the new epoch');
  assert.deepEqual(readdirSync(target), ['db'], 'store only: the p2p secret and the lock are not part of it');
  const again = await runCli(['db', 'backup', target, '--data-dir', original.dataDir]);
  assert.equal(again.code, 1, 'a non-empty target is refused');
  assert.match(again.stderr, /not empty/);

  // 3. Verify the backup in an isolated data directory.
  const isolated = join(backupDir, 'isolated');
  cpSync(target, isolated, { recursive: true });
  const verify = await runCli(['db', 'verify', '--data-dir', isolated]);
  assert.equal(verify.code, 0, verify.stdout);
  assert.ok((JSON.parse(verify.stdout) as { checks: Array<{ name: string; ok: boolean }> }).checks.some((c) => c.name === 'cursors' && c.ok));
  const countsBackup = await inspectCounts(isolated);
  for (const [name, entries] of countsBefore) {
    // The copy's meta also records the epoch it descends from (`ancestorEpochs`, for JetStream publication).
    const expected = name === 'snapshots' || name === 'snapshot.rows' ? 0 : name === 'meta' ? entries + 1 : entries;
    assert.equal(countsBackup.get(name), expected, `entries of ${name}`);
  }

  // 4. Move the active database aside, copy the verified backup in, start.
  const aside = join(original.dataDir, 'db.before-restore');
  renameSync(join(original.dataDir, 'db'), aside);
  cpSync(join(target, 'db'), join(original.dataDir, 'db'), { recursive: true });
  restored = await startNodeProcess({ dir: original.dir, sets: FAST });

  // 5. Compare: a new epoch, old cursors reset, the same coverage, changes, rows and consumers.
  assert.equal(await epochOf(restored), report.storeEpoch);
  const coverageAfter = await coverageOf(restored);
  assert.equal(coverageAfter.configuredStartBlock, coverageBefore.configuredStartBlock);
  assert.ok(coverageAfter.complete);
  assert.ok((coverageAfter.processedThrough ?? -1) >= (coverageBefore.processedThrough ?? 0), 'coverage is at least what it was');
  assert.ok(JSON.stringify((await json<{ data: unknown[] }>(restored, '/v1/q/blobs/blocks?fromBlock=0&toBlock=10')).body.data) === JSON.stringify(finalizedRows), 'the same finalized rows');
  const changesAfter = (await json<{ data: Envelope[] }>(restored, '/v1/processors/blobs/changes?limit=20')).body.data;
  assert.deepEqual(changesAfter.map(withoutCursor), firstChanges.map(withoutCursor), 'the same changes');
  assert.ok(changesAfter.every((e, i) => e.cursor !== firstChanges[i]!.cursor), 'under cursors of the new epoch');
  const resumed = await json<{ data: Envelope[] }>(restored, `/v1/processors/blobs/changes?after=${changesAfter[9]!.cursor}&limit=5`);
  assert.deepEqual(resumed.body.data.map((e) => e.sequence), ['11', '12', '13', '14', '15'], 'new cursors resume');
  const stale = await json<{ error: { code: string } }>(restored, `/v1/processors/blobs/changes?after=${oldCursor}`);
  assert.equal(stale.status, 410);
  assert.equal(stale.body.error.code, 'reset_required', 'a cursor of the old store answers reset_required');

  const after = new ConsumerClient(restored.baseUrl);
  const consumerAfter = (await after.get('drill')).body;
  assert.equal(consumerAfter.role, consumerBefore.role);
  assert.equal(consumerAfter.delivered.sequence, consumerBefore.delivered.sequence);
  assert.equal(consumerAfter.acknowledged.sequence, consumerBefore.acknowledged.sequence);
  assert.notEqual(consumerAfter.acknowledged.cursor, consumerBefore.acknowledged.cursor);
  assert.equal((await after.lease('drill', SECRET, true)).status, 200, 'the consumer credential still works');
  const redelivered = await after.changes('drill', SECRET, 3);
  assert.deepEqual(redelivered.body.data.map((e) => e.sequence), ['7', '8', '9'], 'delivery resumes after the acknowledged change');
  assert.equal((await after.ack('drill', SECRET, redelivered.body.data[2]!.cursor)).status, 200, 'new cursors acknowledge');

  // 6. Verified: the old database can go.
  assert.equal(await restored.stop('SIGTERM'), 0);
  const verifyRestored = await runCli(['db', 'verify', '--data-dir', original.dataDir]);
  assert.equal(verifyRestored.code, 0, verifyRestored.stdout);
  rmSync(aside, { recursive: true });
  mkdirSync(join(backupDir, 'done'));
});
