import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import erc20 from '../../../actors/kinds/erc20/index.js';
import amm from '../../../actors/kinds/amm/index.js';
import { commitMoves, readMoves, type CommitContext } from '../../../actors/processor/commit.js';
import { commitFinalized } from '../../../actors/chain/journal-writer.js';
import { createSavepoint, deleteSavepoint, seedFromSavepoint, seedRefusal, type SavepointIdentity } from '../../../actors/processor/savepoint.js';
import type { KindContext, ProcessorKind } from '../../../actors/kinds/sdk/kind.js';
import { readProgress, readRanges, stateOrigin } from '../../../store/coverage.js';
import { decodeSavepoint, getSavepoint, listSavepoints } from '../../../store/savepoints.js';
import type { ProcessorTables } from '../../../store/store.js';
import { CodedError } from '../../../runtime/errors.js';
import { devnetStore, type DevnetStore } from '../../api/rpc/devnet-store.js';

const rowsOf = (tables: ProcessorTables): string[] => [...tables.entities.getRange({})].map(({ key, value }) => `${Buffer.from(key).toString('hex')}=${Buffer.from(value).toString('hex')}`);

function context(d: DevnetStore, instance: string, kind: ProcessorKind, options: Record<string, unknown>, startBlock: number | null = null): CommitContext {
  const tables = d.store.processor(instance);
  return {
    store: d.store, tables, kind: kind.bind(options), changeSchema: kind.changeSchema, needs: kind.needs, ordering: kind.ordering, checkpoints: { everyBlocks: 0, retained: 1 },
    kindContext: { tables, network: 'devnet', schedule: { forks: [] } as unknown as KindContext['schedule'], genesis: { hash: `0x${'00'.repeat(32)}`, timestamp: 0 } },
    instance, chainId: 1337, startBlock,
  };
}

const identity = (instance: string, kind: ProcessorKind = erc20, options: unknown = { tokens: '*' }): SavepointIdentity => ({
  chainId: 1337, genesisHash: `0x${'ab'.repeat(32)}`,
  processor: { id: instance, instance, kind: kind.name, version: kind.version, changeSchema: kind.changeSchema, options },
});

async function processJournal(ctx: CommitContext, after = readProgress(ctx.tables.state).journalSequence, until = Number.MAX_SAFE_INTEGER): Promise<void> {
  let at = after;
  for (;;) {
    const moves = readMoves(ctx.store, at, 16).filter((m) => m.sequence <= until);
    if (moves.length === 0) return;
    await commitMoves(ctx, moves, '2026-01-01T00:00:00.000Z');
    at = moves.at(-1)!.sequence;
  }
}

test('a savepoint of the finalized state seeds a new instance that, after the rest of the journal (reorgs included), equals processing from scratch; a seed that does not fit is refused with the reason', async (t) => {
  const d = await devnetStore({ seed: 'savepoint-seed', reorgEvery: 5, reorgDepth: 2, finalityLag: 4 }, 40, { finalize: false });
  t.after(() => d.close());
  const trail = d.run.finalizedTrail.filter((b) => b.number > 0);
  await commitFinalized(d.store, d.chain, trail[Math.floor(trail.length / 2)]!);
  const middle = readMoves(d.store, 0, 1_000_000).at(-1)!.sequence;
  await commitFinalized(d.store, d.chain, trail.at(-1)!);

  // The source processes up to the first finality and makes a savepoint there.
  const source = context(d, 'source', erc20, { tokens: '*' });
  await processJournal(source, 0, middle);
  const summary = await createSavepoint(source, identity('source'), 'sp-1', '2026-01-01T00:00:00.000Z');
  assert.equal(summary.blockNumber, readProgress(source.tables.state).finalizedNumber);
  await assert.rejects(createSavepoint(source, identity('source'), 'sp-1', 'x'), (error: Error) => error instanceof CodedError && error.code === 'conflict');
  assert.deepEqual(listSavepoints(source.tables.savepoints).map((s) => s.id), ['sp-1']);
  const archive = Buffer.from(getSavepoint(source.tables.savepoints, 'sp-1')!.archive);
  const { header } = decodeSavepoint(archive);
  assert.equal(header.stateFrom, stateOrigin(readRanges(source.tables.coverage), readProgress(source.tables.state)));
  const file = join(d.dataDir, 'sp-1.savepoint');
  writeFileSync(file, archive);

  // A new instance seeded from it follows the whole journal (historic moves at or below the savepoint are skipped) and equals one from scratch.
  const seeded = context(d, 'seeded', erc20, { tokens: '*' });
  const progress = await seedFromSavepoint(seeded, file, identity('seeded'));
  assert.deepEqual([progress.seededFromCheckpoint, progress.reduceCursor?.number, progress.configuredStartBlock], [true, header.block.number, header.block.number + 1]);
  const running = { ...seeded, startBlock: header.block.number + 1 };
  await processJournal(running);
  const scratch = context(d, 'scratch', erc20, { tokens: '*' });
  await processJournal(scratch);
  assert.deepEqual(readProgress(running.tables.state).reduceCursor, readProgress(scratch.tables.state).reduceCursor);
  assert.deepEqual(rowsOf(running.tables), rowsOf(scratch.tables));
  assert.equal(stateOrigin(readRanges(running.tables.coverage), readProgress(running.tables.state)), header.stateFrom, 'the seed\'s origin carries over: erc20 balances stay exact');
  // Seeding again with the same archive (a restart) changes nothing; another instance with state refuses.
  await seedFromSavepoint(seeded, file, identity('seeded'));
  await assert.rejects(seedFromSavepoint(scratch, file, identity('scratch')), /already has state/);

  assert.match(seedRefusal(header, { ...identity('x'), chainId: 1 })!, /chain 1337; this node serves chain 1/);
  assert.match(seedRefusal(header, { ...identity('x'), genesisHash: `0x${'cd'.repeat(32)}` })!, /another chain/);
  assert.match(seedRefusal(header, identity('x', amm, { tokens: '*' }))!, /kind 'erc20'; this processor is kind 'amm'/);
  assert.match(seedRefusal(header, identity('x', { ...erc20, version: '1.1.0' }))!, /version 1\.0\.0; this processor runs version 1\.1\.0/);
  assert.match(seedRefusal(header, identity('x', erc20, { tokens: ['0x00000000000000000000000000000000000000aa'] }))!, /other options/);
  assert.equal(seedRefusal(header, identity('x')), null);

  await deleteSavepoint(source, 'sp-1');
  await assert.rejects(deleteSavepoint(source, 'sp-1'), (error: Error) => error instanceof CodedError && error.code === 'not_found');
});
