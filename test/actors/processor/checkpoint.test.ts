import { test } from 'node:test';
import assert from 'node:assert/strict';
import erc20 from '../../../actors/kinds/erc20/index.js';
import { checkpointDue, restoreCheckpoint, takeCheckpoint } from '../../../actors/processor/checkpoint.js';
import type { BlockInput, KindContext } from '../../../actors/kinds/sdk/kind.js';
import { getCheckpoint, listCheckpoints, putCheckpoint } from '../../../store/checkpoints.js';
import { readProgress } from '../../../store/coverage.js';
import { commitMoves, readMoves, type CommitContext } from '../../../actors/processor/commit.js';
import { commitFinalized } from '../../../actors/chain/journal-writer.js';
import { decodeHeader } from '../../../net/eth/header.js';
import { hexToBytes } from '../../../net/eth/hex.js';
import { getHeaderBytes, materialKey } from '../../../store/chain-material.js';
import { devnetStore, type DevnetStore } from '../../api/rpc/devnet-store.js';
import type { ProcessorTables } from '../../../store/store.js';
import { CodedError } from '../../../runtime/errors.js';
import type { ArtifactPolicy } from '../../../actors/processor/artifacts.js';
import { readBlockInput } from '../../../actors/processor/block-input.js';
import { claimsOf, decodeArtifact, INSTANCE_OWNER, readTotals } from '../../../store/artifacts.js';
import { u64Key } from '../../../store/keys.js';
import { encodeDeltas } from '../../../actors/kinds/sdk/delta-codec.js';
import { closeTempStore, createTempStore } from '../../api/aggregate/store-fixture.js';
import { defaultDevnetChain } from '../kinds/blobs/support.js';

function context(tables: ProcessorTables): KindContext {
  return { tables, network: 'devnet', schedule: { forks: [] } as unknown as KindContext['schedule'], genesis: { hash: `0x${'00'.repeat(32)}`, timestamp: 0 } };
}

async function devnetInputs(count: number): Promise<BlockInput[]> {
  const chain = await defaultDevnetChain();
  return chain.blocks.slice(0, count).map((b) => ({ number: b.block.header.number, hash: b.hash, header: b.block.header, transactions: [], receipts: b.receipts, sizeBytes: 0, parentTimestamp: null }));
}

const rowsOf = (tables: ProcessorTables): string[][] => [...tables.entities.getRange({})].map(({ key, value }) => [Buffer.from(key).toString('hex'), Buffer.from(value).toString('hex')]);

test('a checkpoint is due each time finality crosses a multiple of the interval', () => {
  const policy = { everyBlocks: 10, retained: 2 };
  assert.deepEqual([checkpointDue(policy, null, 9), checkpointDue(policy, null, 10), checkpointDue(policy, 9, 10), checkpointDue(policy, 10, 19), checkpointDue(policy, 12, 31)], [false, true, true, false, true]);
  assert.equal(checkpointDue({ everyBlocks: 0, retained: 2 }, 0, 100), false);
});

test('a checkpoint taken with later blocks applied holds the state as of its block; the newest are retained', async (t) => {
  const temp = createTempStore('cdn-checkpoint-');
  t.after(() => closeTempStore(temp));
  const live = temp.store.processor('erc20@live');
  const reference = temp.store.processor('erc20@reference');
  const kind = erc20.bind({ tokens: '*' });
  const blocks = await devnetInputs(12);
  const policy = { everyBlocks: 4, retained: 2 };
  // The live instance has applied 1..12 and then learns finality through 4, 8 and 10.
  await temp.store.write(() => { for (const block of blocks) kind.apply(context(live), block, 'included'); });
  for (const through of [4, 8, 10]) {
    await temp.store.write(() => {
      kind.finalize(context(live), 0, through);
      if (checkpointDue(policy, through === 4 ? null : through === 8 ? 4 : 8, through)) takeCheckpoint(live, policy, { number: through, hash: blocks[through - 1]!.hash }, 0n, kind.finalizedValue);
    });
  }
  assert.deepEqual(listCheckpoints(live.checkpoints).map((c) => c.checkpoint), ['8', '4'], 'checkpoints at 4 and 8; 10 crossed no multiple');
  // From scratch through block 8, finalized: the checkpoint's rows are exactly that state.
  await temp.store.write(() => { for (const block of blocks.slice(0, 8)) kind.apply(context(reference), block, 'finalized'); });
  const checkpoint = getCheckpoint(live.checkpoints, 8)!;
  assert.deepEqual(checkpoint.rows.map(([k, v]) => [Buffer.from(k).toString('hex'), Buffer.from(v).toString('hex')]), rowsOf(reference));
});

/** A devnet chain with reorgs recorded the way the node records it (material, journal), finality moved in steps. */
async function journalled(t: { after: (fn: () => Promise<void>) => void }): Promise<DevnetStore> {
  const d = await devnetStore({ seed: 'checkpoint-restore', reorgEvery: 5, reorgDepth: 2, finalityLag: 4 }, 40, { finalize: false });
  t.after(() => d.close());
  const trail = d.run.finalizedTrail.filter((b, i, all) => b.number > 0 && (i === 0 || all[i - 1]!.number !== b.number));
  for (const step of [trail[Math.floor(trail.length / 3)]!, trail[Math.floor((2 * trail.length) / 3)]!, trail.at(-1)!]) await commitFinalized(d.store, d.chain, step);
  return d;
}

function commitContext(d: DevnetStore, instance: string, checkpoints: { everyBlocks: number; retained: number }): CommitContext {
  const tables = d.store.processor(instance);
  return {
    store: d.store, tables, kind: erc20.bind({ tokens: '*' }), changeSchema: erc20.changeSchema, needs: erc20.needs, ordering: erc20.ordering, checkpoints,
    kindContext: { tables, network: 'devnet', schedule: { forks: [] } as unknown as KindContext['schedule'], genesis: { hash: `0x${'00'.repeat(32)}`, timestamp: 0 } },
    instance, chainId: 1337, startBlock: null,
  };
}

async function processJournal(ctx: CommitContext): Promise<void> {
  for (;;) {
    const moves = readMoves(ctx.store, readProgress(ctx.tables.state).journalSequence, 16);
    if (moves.length === 0) return;
    await commitMoves(ctx, moves, '2026-01-01T00:00:00.000Z');
  }
}

test('restore of the current checkpoint with the chain past it: the checkpoint rows plus the retained blocks re-reduced to the exact reduce cursor, atomically, equal processing from scratch (a later reorg still undoes exactly); an older checkpoint is refused', async (t) => {
  const d = await journalled(t);
  const live = commitContext(d, 'erc20@live', { everyBlocks: 4, retained: 2 });
  const reference = commitContext(d, 'erc20@reference', { everyBlocks: 0, retained: 1 });
  await processJournal(live);
  await processJournal(reference);
  const checkpoints = listCheckpoints(live.tables.checkpoints);
  assert.equal(checkpoints.length, 2, JSON.stringify(checkpoints));
  const cursor = readProgress(live.tables.state).reduceCursor!;
  assert.ok(cursor.number > checkpoints[0]!.blockNumber, 'the chain is past the newest checkpoint, as on any live chain');
  assert.deepEqual(rowsOf(live.tables), rowsOf(reference.tables));

  // Damage the private state: a stray row, a lost row, lost inverses.
  await d.store.write(() => {
    const [first] = [...live.tables.entities.getKeys({ limit: 1 })];
    live.tables.entities.remove(first!);
    live.tables.entities.put(Buffer.from('01ff', 'hex'), Buffer.from('damage'));
    for (const key of [...live.tables.undo.getKeys({})]) live.tables.undo.remove(key);
  });
  const damaged = rowsOf(live.tables);
  await assert.rejects(restoreCheckpoint(live, checkpoints[1]!.checkpoint), (error: Error) => error instanceof CodedError && error.code === 'conflict' && /older than the processor's current checkpoint/.test(error.message));
  await assert.rejects(restoreCheckpoint(live, '3'), (error: Error) => error instanceof CodedError && error.code === 'not_found');
  assert.deepEqual(rowsOf(live.tables), damaged, 'a refused restore changes nothing');

  const restored = await restoreCheckpoint(live, checkpoints[0]!.checkpoint);
  assert.deepEqual(restored.reduceCursor, cursor);
  assert.deepEqual(restored.replayed, { fromBlock: checkpoints[0]!.blockNumber + 1, toBlock: cursor.number, blocks: cursor.number - checkpoints[0]!.blockNumber });
  assert.deepEqual(rowsOf(live.tables), rowsOf(reference.tables), 'the repaired state equals processing from scratch');
  assert.deepEqual(readProgress(live.tables.state).reduceCursor, cursor, 'the cursor is unchanged');

  // The inverses of the unfinalized blocks were recorded again: undoing them on both gives equal states.
  const finalized = readProgress(live.tables.state).finalizedNumber!;
  assert.ok(cursor.number > finalized, 'unfinalized blocks above the finalized one');
  for (const ctx of [live, reference]) {
    await d.store.write(() => {
      let hash = readProgress(ctx.tables.state).reduceCursor!.hash;
      for (let n = cursor.number; n > finalized; n -= 1) {
        ctx.kind.undo(ctx.kindContext, n, hash, finalized);
        hash = decodeHeader(getHeaderBytes(d.store, hexToBytes(hash))!).parentHash;
      }
    });
  }
  assert.deepEqual(rowsOf(live.tables), rowsOf(reference.tables), 'undo after the restore restores the same states');
});

test('a restore refuses a checkpoint that does not match its digest, and one whose blocks to the cursor are no longer retained; neither changes the state', async (t) => {
  const d = await journalled(t);
  const live = commitContext(d, 'erc20@live', { everyBlocks: 4, retained: 2 });
  await processJournal(live);
  const [newest] = listCheckpoints(live.tables.checkpoints);
  const record = getCheckpoint(live.tables.checkpoints, newest!.blockNumber)!;
  const before = rowsOf(live.tables);
  await d.store.write(() => putCheckpoint(live.tables.checkpoints, { ...record, rows: record.rows.slice(1) }));
  await assert.rejects(restoreCheckpoint(live, newest!.checkpoint), (error: Error) => error instanceof CodedError && error.code === 'internal');
  await d.store.write(() => putCheckpoint(live.tables.checkpoints, record));
  // The block after the checkpoint loses its receipts (pruned material): the restore cannot reach the cursor.
  const next = readMoves(d.store, 0, 100_000).map((m) => m.move).filter((m) => m.op === 'apply' && m.number === newest!.blockNumber + 1).at(-1)!;
  await d.store.write(() => d.store.chain.receipts.remove(materialKey(next.number, next.hash)));
  await assert.rejects(restoreCheckpoint(live, newest!.checkpoint), (error: Error) => error instanceof CodedError && error.code === 'conflict' && /no longer retained|not recorded/.test(error.message));
  assert.deepEqual(rowsOf(live.tables), before);
});

test('a restore leaves the artifact records exactly as processing left them: every re-reduced block keeps its retained or pending artifact, equal to its map output, with its owners, totals and window', async (t) => {
  const d = await journalled(t);
  const policy: ArtifactPolicy = { retention: 'window', windowBlocks: 12, maxBytes: 1e9, maxPendingBlocks: 1000, peers: [] };
  const live = { ...commitContext(d, 'erc20@live', { everyBlocks: 4, retained: 2 }), artifacts: { policy, peers: [] } };
  await processJournal(live);
  const rawArtifacts = () => [...live.tables.artifacts.getRange({})].map(({ key, value }) => [Buffer.from(key).toString('hex'), Buffer.from(value).toString('hex')]);
  const before = rawArtifacts();
  const totals = readTotals(live.tables.artifacts);
  const [checkpoint] = listCheckpoints(live.tables.checkpoints);
  const progress = readProgress(live.tables.state);
  const cursor = progress.reduceCursor!;
  assert.ok(cursor.number > progress.finalizedNumber! && progress.finalizedNumber! >= checkpoint!.blockNumber, 'unfinalized blocks after the checkpoint');
  assert.ok(totals.windowPrunedThrough >= 0, 'the window has dropped the instance\'s oldest claims');

  await d.store.write(() => {
    for (const key of [...live.tables.entities.getKeys({ limit: 3 })]) live.tables.entities.remove(key);
    for (const key of [...live.tables.undo.getKeys({})]) live.tables.undo.remove(key);
  });
  const restored = await restoreCheckpoint(live, checkpoint!.checkpoint);
  assert.equal(restored.replayed?.blocks, cursor.number - checkpoint!.blockNumber);
  assert.deepEqual(rawArtifacts(), before, 'records, claims, pending candidates and totals are byte for byte what processing left');

  // What the restore re-reduced is what the artifacts hold: each block's recorded map output is the block's map output.
  const split = live.kind.artifacts!;
  let hash = cursor.hash;
  for (let n = cursor.number; n > checkpoint!.blockNumber; n -= 1) {
    const input = readBlockInput(d.store, n, hash, live.needs, live.kind.logInterest);
    const finalized = n <= progress.finalizedNumber!;
    const bytes = live.tables.artifacts.getBinary(Buffer.concat([u64Key(BigInt(n)), Buffer.from([finalized ? 0x00 : 0x02])]));
    assert.ok(bytes, `block ${n} (${finalized ? 'finalized' : 'included'}) keeps its artifact`);
    assert.equal(decodeArtifact(n, bytes!).hash, hash, `block ${n}: the artifact is of the branch the state was re-reduced on`);
    assert.ok(decodeArtifact(n, bytes!).payload.equals(encodeDeltas(split.map(live.kindContext, input))), `block ${n}: the recorded payload is its map output`);
    if (finalized) assert.deepEqual(claimsOf(live.tables.artifacts, n), [INSTANCE_OWNER], `block ${n}: owned by the instance (inside the window)`);
    hash = input.header.parentHash;
  }
});
