import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { compareInstances } from '../../../actors/history/rebuild-compare.js';
import { createProcessorRebuild, type RebuildLaneState } from '../../../actors/history/rebuilds.js';
import type { HistoryProcessorArgs } from '../../../actors/history/actor.js';
import { CodedError } from '../../../runtime/errors.js';
import { encodeChangeValue, putChange } from '../../../store/change-log.js';
import { coverBlock, INITIAL_PROGRESS, writeProgress } from '../../../store/coverage.js';
import { openStore, type ProcessorTables, type Store } from '../../../store/store.js';
import { listRebuilds } from '../../../store/rebuilds.js';
import { tempDir } from '../../store/helpers/temp-dir.js';

function storeFor(t: TestContext): Store {
  const store = openStore({ dataDir: tempDir(t), chainId: 1337 });
  t.after(() => store.close());
  return store;
}

const hash = (n: number, branch = 'a') => `0x${branch.repeat(2)}${n.toString(16).padStart(62, '0')}`;

interface Change { op?: 'apply' | 'undo' | 'finalized'; block: number; branch?: string; kind: string; key: string; data: unknown; origin?: string }

/** Writes an instance's change log (envelopes as the processor renders them, in the order given), coverage and finalized block. */
async function instance(store: Store, name: string, changes: readonly Change[], covered: readonly [number, number], finalized: number): Promise<ProcessorTables> {
  const tables = store.processor(name);
  await store.write(() => {
    changes.forEach((change, i) => {
      const envelope = {
        apiVersion: '1', sequence: String(i + 1), cursor: 'c', operation: change.op ?? 'apply', originKind: change.origin ?? 'live', originId: 'live', publicationRevision: '1', chainId: 1337,
        block: { number: change.block, hash: hash(change.block, change.branch), parentHash: hash(change.block - 1), timestamp: change.block }, finality: 'included',
        kind: change.kind, schema: 'test.v1', key: change.key, data: change.data, emittedAt: `2026-01-01T00:00:0${i % 10}Z`,
      };
      putChange(tables.changes, BigInt(i + 1), encodeChangeValue(change.op ?? 'apply', 'c', JSON.stringify(envelope)));
    });
    for (let n = covered[0]; n <= covered[1]; n += 1) coverBlock(tables, n);
    writeProgress(tables.state, { ...INITIAL_PROGRESS, finalizedNumber: finalized, state: 'live' });
  });
  return tables;
}

const block = (n: number, finality: string, extra: Record<string, unknown> = {}): Change => ({ block: n, kind: 'x.block.put', key: `b${n}`, data: { block: { blockNumber: n, finality }, ...extra } });
const schedule = (n: number, activation: number | null): Change => ({ block: n, kind: 'x.schedule.put', key: 'fork', data: { activationBlock: activation } });

test('compareInstances: equal outputs whatever their finality, origin, log order and the block static rows were emitted at; undone applies drop out', async (t) => {
  const store = storeFor(t);
  // Serving: live from block 0, a reorg at block 3 (branch b replaced by a), a schedule row filled at block 2.
  const serving = await instance(store, 'x', [
    schedule(0, null), block(0, 'preview'), block(1, 'included'), schedule(2, 2), block(2, 'included'),
    { ...block(3, 'preview', { wrong: true }), branch: 'b' }, { op: 'undo', block: 3, branch: 'b', kind: 'x.block.delete', key: 'b3', data: null },
    block(3, 'included'), block(4, 'included'), block(5, 'preview'),
  ], [0, 5], 4);
  // Replacement: its live lane from block 4 writes the schedule row unfilled; history, top-down in chunks, fills it at block 2.
  const replacement = await instance(store, 'x~r1', [
    schedule(4, null), block(4, 'preview'), block(2, 'finalized'), schedule(2, 2), block(3, 'finalized'), block(0, 'finalized'), block(1, 'finalized'),
  ].map((c) => ({ ...c, origin: 'historical_backfill' })), [0, 4], 4);
  const result = compareInstances(serving, replacement, 0, 'now');
  assert.equal(result.equal, true, JSON.stringify(result.firstDifference));
  assert.deepEqual([result.fromBlock, result.toBlock, result.blocksCompared, result.changesCompared], [0, 4, 5, 6], 'blocks 0-4 (5 is not final in both); five blocks and the schedule row');
});

test('compareInstances: the lowest block whose output differs, and why', async (t) => {
  const store = storeFor(t);
  const serving = await instance(store, 's', [block(0, 'finalized'), block(1, 'finalized'), block(2, 'finalized', { gas: 1 }), block(3, 'finalized', { gas: 1 })], [0, 3], 3);
  const replacement = await instance(store, 'r', [block(3, 'finalized', { gas: 2 }), block(2, 'finalized', { gas: 2 }), block(1, 'finalized')], [1, 3], 3);
  const result = compareInstances(serving, replacement, 0, 'now');
  assert.equal(result.equal, false);
  assert.deepEqual([result.fromBlock, result.toBlock], [1, 3], 'only blocks both cover are compared');
  assert.equal(result.firstDifference?.blockNumber, 2);
  assert.match(result.firstDifference!.reason, /x\.block\.put b2: the serving instance's value \(block 2\) differs/);
  const missing = compareInstances(serving, await instance(store, 'm', [block(1, 'finalized'), block(3, 'finalized', { gas: 1 })], [1, 3], 3), 0, 'now');
  assert.equal(missing.firstDifference?.blockNumber, 2);
  assert.match(missing.firstDifference!.reason, /only the serving instance has it/);
});

test('compareInstances: a block undone and applied again counts; an apply undone later does not, whatever came between', async (t) => {
  const store = storeFor(t);
  const undo = (n: number, branch: string): Change => ({ op: 'undo', block: n, branch, kind: 'x.block.delete', key: `b${n}`, data: null });
  // Block 3: a, then b, then a again (the chain went back); block 4: applied on branch c, then undone for good.
  const serving = await instance(store, 's', [
    block(2, 'included'), block(3, 'included'), undo(3, 'a'), { ...block(3, 'included', { other: true }), branch: 'b' }, undo(3, 'b'),
    block(3, 'included'), { ...block(4, 'included', { gone: true }), branch: 'c' }, block(2, 'included', { late: true }), undo(4, 'c'),
  ], [2, 4], 4);
  const replacement = await instance(store, 'r', [block(2, 'finalized', { late: true }), block(3, 'finalized')], [2, 4], 4);
  const result = compareInstances(serving, replacement, 0, 'now');
  assert.equal(result.equal, true, JSON.stringify(result.firstDifference));
  assert.equal(result.changesCompared, 2, 'b2 (its later value) and b3 (branch a); b4 was undone');
});

const lane = (store: Store, sources: string[], processor: Partial<HistoryProcessorArgs> = {}): RebuildLaneState => ({
  store, sources: new Map(sources.map((s) => [s, {}])), defaultSource: sources[0], skippedSources: [],
  processors: new Map([['blobs', { id: 'blobs', instance: 'blobs', historyMode: 'live_only', historyControl: 'node_owned', ordering: 'block_local', startBlock: 0, ...processor }]]),
});

async function refusal(state: RebuildLaneState, request: { processor: string; idempotencyKey: string; source?: string }): Promise<CodedError> {
  const ctx = { ask: () => { throw new Error('no lane may be started for a refused rebuild'); }, log: { info() {}, warn() {} } } as never;
  const error = await createProcessorRebuild(ctx, state, request).then(() => null, (e: unknown) => e);
  assert.ok(error instanceof CodedError, `refused: ${String(error)}`);
  assert.equal(listRebuilds(state.store).length, 0, 'a refused rebuild leaves no record');
  return error;
}

test('a rebuild is refused without a history source (422 naming the rule), for an application-scheduled processor (422), for an unknown processor or source (404)', async (t) => {
  const store = storeFor(t);
  const none = await refusal(lane(store, []), { processor: 'blobs', idempotencyKey: 'k' });
  assert.equal(none.code, 'unsupported_capability');
  assert.equal((none.details as { rule: string }).rule, 'rebuild_needs_history_source');
  assert.match(none.message, /\[\[sources\.history\]\]/);
  const app = await refusal(lane(store, ['devnet'], { historyControl: 'application_subscriptions' }), { processor: 'blobs', idempotencyKey: 'k' });
  assert.equal(app.code, 'unsupported_capability');
  assert.match(app.message, /history_control = "application_subscriptions"/);
  assert.equal((await refusal(lane(store, ['devnet']), { processor: 'nope', idempotencyKey: 'k' })).code, 'not_found');
  assert.equal((await refusal(lane(store, ['devnet']), { processor: 'blobs', idempotencyKey: 'k', source: 'nope' })).code, 'not_found');
});
