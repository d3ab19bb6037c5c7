/** The change log's groups: what readers get from them, how they mix with single changes, and what retention, verify and epoch rotation do with them. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ChangeGroupWriter } from '../../actors/processor/change-writer.js';
import { renderEnvelope } from '../../store/change-envelope.js';
import {
  changeFacts, changeHead, changeTail, checkStoredEntry, encodeChangeGroup, encodeChangeValue, holdsChange, putChange, readChange, readChanges, GROUP_MAX_CHANGES,
  type ChangeGroupHead, type GroupedChange,
} from '../../store/change-log.js';
import { dbBackup, dbVerify } from '../../store/commands.js';
import { INITIAL_PROGRESS, writeProgress } from '../../store/coverage.js';
import { decodeCursor, encodeCursor } from '../../store/cursor.js';
import { openStore, type Store } from '../../store/store.js';
import { u64Key } from '../../store/keys.js';
import { pruneChanges } from '../../store/prune-changes.js';
import { tempDir } from './helpers/temp-dir.js';

const CHAIN_ID = 7;
const block = (number: number) => ({ number, hash: `0x${number.toString(16).padStart(64, 'a')}`, parentHash: `0x${(number - 1).toString(16).padStart(64, 'b')}`, timestamp: 1_700_000_000 + number * 12 }) as const;
const logOf = (store: Store, instance = 'app') => ({ changes: store.processor(instance).changes, epoch: store.epoch, chainId: CHAIN_ID, instance });

/** Changes of block `number`: puts and deletes interleaved (two kinds in one group), payloads with non-ASCII text, null keys and data. */
function blockChanges(number: number, count: number): GroupedChange[] {
  return Array.from({ length: count }, (_, i) => (i % 3 === 2
    ? { kind: 'app.row.delete', key: `k${number}-${i}`, dataJson: null }
    : { kind: 'app.row.put', key: i === 0 ? null : `k${number}-${i}`, dataJson: JSON.stringify({ value: String(i * number), note: 'é✓"\n' }) }));
}

/** What the commit path rendered per change before groups: renderEnvelope with the change's own cursor. */
function expected(head: ChangeGroupHead, sequence: bigint, change: GroupedChange, epoch: bigint, instance = 'app'): { cursor: string; json: string } {
  const cursor = encodeCursor({ epoch, chainId: CHAIN_ID, instance, sequence, block: { number: head.block.number, hash: head.block.hash } });
  return { cursor, json: renderEnvelope({ ...head, sequence, cursor, chainId: CHAIN_ID, kind: change.kind, key: change.key, dataJson: change.dataJson }) };
}

interface Written { readonly sequence: bigint; readonly head: ChangeGroupHead; readonly change: GroupedChange }

/** Writes blocks 1..blocks through the lane's writer (`perBlock` changes each, then a `finalized` change for every third block). */
async function writeLog(store: Store, blocks: number, perBlock: number, instance = 'app'): Promise<Written[]> {
  const written: Written[] = [];
  const tables = store.processor(instance);
  await store.write(() => {
    const writer = new ChangeGroupWriter({ changes: tables.changes, epoch: store.epoch, chainId: CHAIN_ID, instance });
    let sequence = 0n;
    for (let number = 1; number <= blocks; number += 1) {
      const head: ChangeGroupHead = { operation: 'apply', finality: 'included', block: block(number), schema: 'app.v1', emittedAt: '2026-01-01T00:00:00.000Z' };
      for (const change of blockChanges(number, perBlock)) {
        sequence += 1n;
        writer.add(sequence, head, change);
        written.push({ sequence, head, change });
      }
      if (number % 3 === 0) {
        const final: ChangeGroupHead = { operation: 'finalized', finality: 'finalized', block: block(number), schema: 'app.v1', emittedAt: '2026-01-01T00:00:00.000Z', originKind: 'historical_backfill', originId: 'sub-1' };
        const change = { kind: 'app.finalized', key: null, dataJson: null };
        sequence += 1n;
        writer.add(sequence, final, change);
        written.push({ sequence, head: final, change });
      }
    }
    writer.flush();
    writeProgress(tables.state, { ...INITIAL_PROGRESS, changeSequence: sequence });
  });
  return written;
}

test('a group holds each of its changes byte for byte as the per-change envelope was rendered, read from any sequence on, with any limit', async (t) => {
  const store = openStore({ dataDir: join(tempDir(t), 'data'), chainId: CHAIN_ID });
  t.after(() => store.close());
  const written = await writeLog(store, 6, 25);
  const log = logOf(store);
  // 6 blocks of 25 changes, and 2 finalized changes: 8 entries (one per block and operation), not 152.
  assert.equal(store.processor('app').changes.getCount(), 8);
  assert.equal(changeHead(log.changes), BigInt(written.length));
  assert.equal(changeTail(log.changes), 1n);
  const all = readChanges(log, 0n, 10_000);
  assert.deepEqual(all.map((c) => c.sequence), written.map((w) => w.sequence), 'dense and in order');
  for (const [i, change] of all.entries()) {
    const w = written[i]!;
    const want = expected(w.head, w.sequence, w.change, store.epoch);
    assert.equal(change.json.toString('utf8'), want.json, `change ${w.sequence}`);
    assert.equal(change.cursor, want.cursor);
    assert.equal(change.operation, w.head.operation);
    assert.equal(change.blockNumber, w.head.block.number);
    assert.equal(decodeCursor(change.cursor, { epoch: store.epoch, chainId: CHAIN_ID, instance: 'app' }).sequence, w.sequence);
    JSON.parse(change.json.toString('utf8'));
  }
  // Pages that start and end inside groups.
  for (const [after, limit] of [[0n, 1], [10n, 7], [24n, 30], [25n, 1], [76n, 1000], [151n, 5], [152n, 5]] as const) {
    const page = readChanges(log, after, limit);
    assert.deepEqual(page.map((c) => c.sequence), all.filter((c) => c.sequence > after).slice(0, limit).map((c) => c.sequence), `after ${after}, limit ${limit}`);
  }
  assert.equal(readChange(log, 40n)?.json.toString('utf8'), all[39]!.json.toString('utf8'));
  assert.equal(readChange(log, 0n), undefined);
  assert.equal(readChange(log, 153n), undefined);
  assert.ok(holdsChange(log.changes, 1n) && holdsChange(log.changes, 152n) && !holdsChange(log.changes, 153n));
  // Facts parsed from the envelopes agree with what was written.
  const facts = [...changeFacts(log.changes, 30n)];
  assert.deepEqual(facts.map((f) => [f.sequence, f.kind, f.key, f.dataJson]), written.slice(29).map((w) => [w.sequence, w.change.kind, w.change.key, w.change.dataJson]));
});

test('a block with more changes than a group holds is written as several groups, and a log mixes groups with single changes of earlier versions', async (t) => {
  const store = openStore({ dataDir: join(tempDir(t), 'data'), chainId: CHAIN_ID });
  t.after(() => store.close());
  const log = logOf(store);
  // Earlier versions' single changes 1..3, then groups from 4 on.
  const singles = [1n, 2n, 3n].map((sequence) => {
    const cursor = encodeCursor({ epoch: store.epoch, chainId: CHAIN_ID, instance: 'app', sequence, block: { number: 1, hash: block(1).hash } });
    return { sequence, cursor, json: `{"sequence":"${sequence}","cursor":"${cursor}","é":"✓"}` };
  });
  const head: ChangeGroupHead = { operation: 'apply', finality: 'included', block: block(2), schema: 'app.v1', emittedAt: 'now' };
  const many = blockChanges(2, GROUP_MAX_CHANGES + 10);
  await store.write(() => {
    for (const single of singles) putChange(log.changes, single.sequence, encodeChangeValue('apply', single.cursor, single.json));
    const writer = new ChangeGroupWriter(log);
    many.forEach((change, i) => writer.add(4n + BigInt(i), head, change));
    writer.flush();
  });
  assert.equal(log.changes.getCount(), 3 + 2);
  assert.equal(changeHead(log.changes), 3n + BigInt(many.length));
  const all = readChanges(log, 0n, 100_000);
  assert.deepEqual(all.slice(0, 3).map((c) => [c.sequence, c.cursor, c.json.toString('utf8'), c.blockNumber]), singles.map((s) => [s.sequence, s.cursor, s.json, 1]));
  assert.equal(all.length, 3 + many.length);
  const last = all[all.length - 1]!;
  assert.equal(last.json.toString('utf8'), expected(head, last.sequence, many[many.length - 1]!, store.epoch).json);
  assert.deepEqual(readChanges(log, 2n, 3).map((c) => c.sequence), [3n, 4n, 5n], 'a page from a single change into a group');
  assert.throws(() => encodeChangeGroup(log, 4n, head, []), /1 to/);
});

test('a corrupt group is refused where it is read, and by db verify', async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const store = openStore({ dataDir, chainId: CHAIN_ID });
  await writeLog(store, 2, 4);
  const log = logOf(store);
  const value = Buffer.from(log.changes.getBinary(u64Key(1n))!);
  assert.equal(checkStoredEntry(1n, value), 4);
  assert.throws(() => checkStoredEntry(1n, value.subarray(0, value.length - 3)), /truncated/);
  const extra = Buffer.concat([value, Buffer.from([0])]);
  assert.throws(() => checkStoredEntry(1n, extra), /bytes after its 4 changes/);
  await store.write(() => log.changes.put(u64Key(1n), value.subarray(0, value.length - 3)));
  assert.throws(() => readChanges(log, 0n, 10), /change group at 1: truncated/);
  await store.close();
  const verify = await dbVerify(dataDir);
  assert.equal(verify.ok, false);
  assert.match(JSON.stringify(verify.checks.filter((c) => !c.ok)), /truncated/);
});

test('retention removes a group only whole, once its last change is below the floor', async (t) => {
  const store = openStore({ dataDir: join(tempDir(t), 'data'), chainId: CHAIN_ID });
  t.after(() => store.close());
  await writeLog(store, 6, 10); // groups: 1-10, 11-20, 21-30, 31, 32-41, 42-51, 52-61, 62, (6 blocks, 2 finalized) → head 62
  const log = logOf(store);
  assert.equal(changeHead(log.changes), 62n);
  // Keeping the newest 45 puts the floor at 18: only the group 1-10 lies wholly below it.
  const result = pruneChanges(store, 'app', { keepNewest: 45, nowMs: Date.now() });
  assert.deepEqual([result.removed, result.tailBefore, result.tailAfter, result.head], [10, '1', '11', '62']);
  assert.equal(readChanges(log, 0n, 1)[0]?.sequence, 11n, 'the log starts at its new tail');
  assert.ok(!holdsChange(log.changes, 10n) && holdsChange(log.changes, 11n));
});

test('db backup re-mints the cursors of every change of a group, in its entry and its envelope, under the copy\'s new epoch', async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const store = openStore({ dataDir, chainId: CHAIN_ID });
  await writeLog(store, 3, 5);
  const sourceEpoch = store.epoch;
  await store.close();
  const backup = await dbBackup(dataDir, join(dir, 'backup'));
  assert.ok((await dbVerify(join(dir, 'backup'))).ok);
  const copy = openStore({ dataDir: join(dir, 'backup') });
  t.after(() => copy.close());
  assert.notEqual(copy.epoch, sourceEpoch);
  assert.equal(copy.epoch.toString(16).padStart(16, '0'), backup.storeEpoch);
  for (const change of readChanges(logOf(copy), 0n, 100)) {
    assert.equal(decodeCursor(change.cursor, { epoch: copy.epoch, chainId: CHAIN_ID, instance: 'app' }).sequence, change.sequence);
    assert.ok(change.json.includes(`"cursor":"${change.cursor}"`));
  }
});
