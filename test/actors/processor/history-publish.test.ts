/**
 * A backfill subscription's chunk in the processor lane (history-publish.ts): blocks go into the subscription's own
 * stream, in order, once; the instance commits a block only when it did not cover it (once, whoever asked); a block
 * another subscription filled first is republished with the same payload; above-finality and ordered-state refused
 * with nothing committed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blobsKind } from '../../../actors/kinds/blobs/kind.js';
import erc20 from '../../../actors/kinds/erc20/index.js';
import { publishHistoryBlocks, type HistoryPublishMessage } from '../../../actors/processor/history-publish.js';
import type { CommitContext } from '../../../actors/processor/commit.js';
import type { KindContext } from '../../../actors/kinds/sdk/kind.js';
import { readChanges } from '../../../store/change-log.js';
import { readProgress, readRanges, writeProgress } from '../../../store/coverage.js';
import { decodeCursor } from '../../../store/cursor.js';
import type { Store } from '../../../store/store.js';
import { closeTempStore, createTempStore, CHAIN_ID } from '../../api/aggregate/store-fixture.js';
import { defaultDevnetChain, recordCanonical } from '../kinds/blobs/support.js';

interface Env { operation: string; originKind: string; originId: string; kind: string; block: { number: number }; data: unknown; sequence: string; cursor: string }

const envelopes = (store: Store, instance: string): Env[] => readChanges({ changes: store.processor(instance).changes, epoch: store.epoch, chainId: CHAIN_ID, instance }, 0n, 10_000).map((c) => JSON.parse(c.json.toString('utf8')) as Env);
const puts = (list: Env[]) => list.filter((e) => e.kind === 'blobs.block.put').map((e) => e.block.number);

test('history.publish: each block into the stream once and in order; the instance commits only what it did not cover; refusals commit nothing', async (t) => {
  const chain = await defaultDevnetChain();
  const temp = createTempStore('cdn-publish-');
  t.after(() => closeTempStore(temp));
  const { store } = temp;
  const blocks = chain.blocks.slice(0, 12);
  const hexOf = (n: number) => blocks[n - 1]!.hash as `0x${string}`;
  await store.write(() => {
    recordCanonical(store, blocks);
  });
  const tables = store.processor('app');
  await store.write(() => writeProgress(tables.state, { ...readProgress(tables.state), finalizedNumber: 10 }));
  const kindContext: KindContext = { tables, network: 'devnet', schedule: chain.schedule, genesis: chain.genesis };
  const ctx: CommitContext = {
    store, tables, kind: blobsKind.bind({}), changeSchema: blobsKind.changeSchema, needs: blobsKind.needs, ordering: 'block_local',
    checkpoints: { everyBlocks: 0, retained: 3 }, kindContext, instance: 'app', chainId: CHAIN_ID, startBlock: null,
  };
  const message = (stream: string, from: number, to: number, originKind: HistoryPublishMessage['originKind'] = 'historical_backfill'): HistoryPublishMessage => ({
    type: 'history.publish', subscription: `sub-${stream}`, stream, originKind, blocks: Array.from({ length: to - from + 1 }, (_, i) => ({ number: from + i, hash: hexOf(from + i) })),
  });
  const at = '2026-01-01T00:00:00.000Z';

  // s1 fills 3..5: into the instance (coverage, its log) and into s1's stream.
  const first = await publishHistoryBlocks(ctx, message('bs~s1', 3, 5), at);
  assert.deepEqual([first.published, first.filled, first.publishedThrough], [3, 3, 5]);
  assert.deepEqual(readRanges(tables.coverage), [{ from: 3, to: 5 }]);
  const s1 = envelopes(store, 'bs~s1');
  assert.deepEqual(puts(s1), [3, 4, 5]);
  assert.equal(first.streamHead, String(s1.length));

  // s2 owns 1..6 (3..5 filled by s1 meanwhile): every block into its stream, only 1, 2, 6 into the instance.
  const second = await publishHistoryBlocks(ctx, message('bs~s2', 1, 6, 'recompute'), at);
  assert.deepEqual([second.published, second.filled], [6, 3]);
  assert.deepEqual(readRanges(tables.coverage), [{ from: 1, to: 6 }]);
  const s2 = envelopes(store, 'bs~s2');
  assert.deepEqual(puts(s2), [1, 2, 3, 4, 5, 6]);
  assert.deepEqual(s2.map((e) => e.sequence), s2.map((_, i) => String(i + 1)), 'the stream numbers its own changes from 1');
  for (const e of s2) {
    assert.deepEqual([e.operation, e.originKind, e.originId], ['apply', 'recompute', 'sub-bs~s2']);
    assert.equal(decodeCursor(e.cursor, { epoch: store.epoch, chainId: CHAIN_ID, instance: 'bs~s2' }).sequence, BigInt(e.sequence));
    assert.throws(() => decodeCursor(e.cursor, { epoch: store.epoch, chainId: CHAIN_ID, instance: 'app' }), /another processor instance/);
  }
  for (const n of [3, 4, 5]) {
    assert.deepEqual(s2.find((e) => e.kind === 'blobs.block.put' && e.block.number === n)!.data, s1.find((e) => e.kind === 'blobs.block.put' && e.block.number === n)!.data, `block ${n}: the same payload`);
  }
  assert.deepEqual(puts(envelopes(store, 'app')), [3, 4, 5, 1, 2, 6], 'the instance committed each block once');

  // Asked again (a restart after the commit): what was published is skipped; the rest goes on in order.
  const again = await publishHistoryBlocks(ctx, message('bs~s2', 5, 8, 'recompute'), at);
  assert.deepEqual([again.published, again.filled, again.publishedThrough], [2, 2, 8]);
  assert.deepEqual(puts(envelopes(store, 'bs~s2')), [1, 2, 3, 4, 5, 6, 7, 8]);

  // Above the finalized block: refused, nothing of the chunk committed.
  const before = readProgress(store.processor('bs~s2').state);
  await assert.rejects(publishHistoryBlocks(ctx, message('bs~s2', 9, 11, 'recompute'), at), /above the finalized block 10/);
  assert.deepEqual(readProgress(store.processor('bs~s2').state), before);
  assert.deepEqual(readRanges(tables.coverage), [{ from: 1, to: 8 }]);

  // An ordered-state kind cannot republish per block.
  const erc20Ctx: CommitContext = { ...ctx, kind: erc20.bind({ tokens: '*' }), ordering: 'ordered_state', needs: erc20.needs };
  await assert.rejects(publishHistoryBlocks(erc20Ctx, message('bs~s3', 1, 2), at), /ordered-state kind/);
});
