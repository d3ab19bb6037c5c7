import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../actors/node/config.js';
import { startNode } from '../../actors/node/main.js';
import { createLogger } from '../../runtime/log.js';
import { openStore } from '../../store/store.js';
import { dbVerify } from '../../store/commands.js';
import { readChanges } from '../../store/change-log.js';
import { readProgress, readRanges } from '../../store/coverage.js';
import { decodeJournalMove } from '../../store/journal.js';
import { bytesToHex } from '../../net/eth/hex.js';
import { blockKey } from '../../actors/kinds/blobs/keys.js';
import { freePort } from '../support/ports.js';

const FAST_DEVNET = `
[devnet]
block_time_ms = 150
reorg_every = 10
reorg_depth = 2
finality_lag = 4
prague_after_seconds = 6
osaka_after_seconds = 12
bpo1_after_seconds = 18
[finality]
poll_interval_ms = 100
[log]
level = "silent"
`;

interface Envelope {
  sequence: string; operation: string; kind: string; key: string | null; finality: string;
  block: { number: number; hash: string } | null; data: { block?: { blockNumber: number; blockHash: string }; transactions?: unknown[] } | null;
}

test('devnet → chain journal → blobs processor: apply, undo with the previous block, finalized; sequences have no gap', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-pipeline-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'node.toml'), `data_dir = "data"\n[listeners]\napi = "127.0.0.1:${await freePort()}"\nrpc_http = "127.0.0.1:${await freePort()}"\nrpc_ws = "127.0.0.1:${await freePort()}"\n${FAST_DEVNET}`);
  const node = await startNode(loadConfig(join(dir, 'node.toml')), { log: createLogger({ lane: 'node', level: 'silent', maxLinesPerSecond: 10 }) });
  t.after(() => node.stop());
  const store = openStore({ dataDir: join(dir, 'data') });
  let storeOpen = true;
  t.after(() => (storeOpen ? store.close() : undefined));
  const tables = store.processor('blobs');
  const log = { changes: tables.changes, epoch: store.epoch, chainId: store.chainId ?? 0, instance: 'blobs' };

  const deadline = Date.now() + 60_000;
  let changes = readChanges(log, 0n, 100_000);
  while (!(changes.some((c) => c.operation === 'undo') && changes.filter((c) => c.operation === 'finalized').length >= 3)) {
    if (Date.now() > deadline) throw new Error(`no reorg and finality within a minute: ${changes.length} changes`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    changes = readChanges(log, 0n, 100_000);
  }
  const envelopes = changes.map((c) => JSON.parse(c.json.toString('utf8')) as Envelope);
  assert.deepEqual(changes.map((c) => c.sequence), changes.map((_, i) => BigInt(i + 1)), 'change sequences start at 1 and have no gap');
  envelopes.forEach((e, i) => {
    assert.equal(e.sequence, String(i + 1));
    assert.equal(e.operation, changes[i]!.operation);
  });
  const undo = envelopes.find((e) => e.operation === 'undo')!;
  assert.equal(undo.kind, 'blobs.block.delete');
  assert.equal(undo.data!.block!.blockNumber, undo.block!.number, 'the undo carries the previous block');
  assert.ok(Array.isArray(undo.data!.transactions), 'and its transactions');
  const applied = envelopes.find((e) => e.operation === 'apply' && e.kind === 'blobs.block.put' && e.block!.number === undo.block!.number && envelopes.indexOf(e) > envelopes.indexOf(undo));
  assert.ok(applied, 'the replacement branch arrives as an ordinary apply after the undo');
  assert.notEqual(applied.block!.hash, undo.block!.hash);
  assert.ok(envelopes.some((e) => e.kind === 'blobs.schedule.put'), 'the blob schedule is published');

  const journal = [...store.chain.journal.getRange({})].map(({ value }) => decodeJournalMove(value));
  const finalizedNumbers = journal.filter((m) => m.op === 'finalize').map((m) => m.number);
  assert.deepEqual(finalizedNumbers, [...finalizedNumbers].sort((a, b) => a - b), 'finality never goes backwards');
  for (const move of journal.filter((m) => m.op === 'undo')) assert.ok(move.number > Math.max(-1, ...finalizedNumbers.filter((n) => journal.indexOf(journal.find((m) => m.op === 'finalize' && m.number === n)!) < journal.indexOf(move))), 'nothing finalized is undone');

  const progress = readProgress(tables.state);
  const ranges = readRanges(tables.coverage);
  assert.equal(ranges.length, 1, 'coverage has no gap');
  assert.equal(ranges[0]!.from, 0);
  for (let n = ranges[0]!.from; n <= Math.min(ranges[0]!.to, 20); n += 1) {
    const row = tables.entities.getBinary(blockKey(n));
    const canonical = store.chain.canonical.getBinary(Buffer.from(new BigUint64Array([BigInt(n)]).buffer).reverse());
    if (!row || !canonical) continue;
    const stored = JSON.parse(row.toString('utf8')) as { blockHash: string; finality: string };
    assert.equal(stored.blockHash, bytesToHex(canonical), `block ${n} row is the canonical block`);
    assert.equal(stored.finality, progress.finalizedNumber !== null && n <= progress.finalizedNumber ? 'finalized' : 'included');
  }

  storeOpen = false;
  await store.close();
  await node.stop();
  const report = await dbVerify(join(dir, 'data'));
  assert.ok(report.ok, JSON.stringify(report.checks.filter((c) => !c.ok)));
  assert.ok(report.checks.some((c) => c.name === 'chain.journal replay' && c.ok));
  assert.ok(report.checks.some((c) => c.name === 'processor blobs change log and coverage' && c.ok));
});
