import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createDevnet, type DevnetReorg } from '../../../net/devnet/index.js';
import { hashTransaction } from '../../../net/eth/index.js';
import { runDevnet, type DevnetRun } from './run-devnet.js';

let run: DevnetRun;

before(async () => {
  run = await runDevnet({}, 120);
});

function reorgs(r: DevnetRun): { step: DevnetReorg; headBefore: number; index: number }[] {
  return r.steps.flatMap((step, index) => (step.kind === 'reorg' ? [{ step, headBefore: r.headsBefore[index]!, index }] : []));
}

describe('devnet reorgs', () => {
  it('reorgs every reorgEvery heights, forking reorgDepth below the head with a branch one block longer', () => {
    const found = reorgs(run);
    assert.deepEqual(found.map((r) => r.headBefore), [30, 60, 90, 120].filter((h) => h <= run.headsBefore.at(-1)!));
    assert.ok(found.length >= 3);
    for (const { step, headBefore } of found) {
      assert.equal(step.depth, 2);
      assert.equal(step.forkPoint.number, headBefore - 2);
      assert.equal(step.blocks.length, step.depth + 1);
      assert.deepEqual(step.abandoned.map((ref) => ref.number), [headBefore - 1, headBefore]);
      assert.equal(step.blocks[0]!.block.header.parentHash, step.forkPoint.hash);
      step.blocks.forEach((block, i) => {
        assert.equal(block.block.header.number, step.forkPoint.number + 1 + i);
        if (i > 0) assert.equal(block.block.header.parentHash, step.blocks[i - 1]!.hash);
      });
    }
  });

  it('forks from the block that was canonical at the fork point', () => {
    for (const { step, index } of reorgs(run)) {
      const earlier = run.steps.slice(0, index).flatMap((s) => (s.kind === 'block' ? [s] : s.blocks));
      const forkBlock = earlier.findLast((block) => block.block.header.number === step.forkPoint.number);
      assert.equal(forkBlock?.hash, step.forkPoint.hash);
      const abandonedHashes = step.abandoned.map((ref) => earlier.findLast((block) => block.block.header.number === ref.number)?.hash);
      assert.deepEqual(abandonedHashes, step.abandoned.map((ref) => ref.hash), 'the abandoned blocks were the canonical ones');
    }
  });

  it('replaces abandoned blocks with blocks of different transactions, and keeps the abandoned ones readable by hash', () => {
    for (const { step } of reorgs(run)) {
      step.abandoned.forEach((ref, i) => {
        const replacement = step.blocks[i]!;
        assert.notEqual(replacement.hash, ref.hash);
        const old = run.devnet.blockByHash(ref.hash);
        assert.ok(old, `abandoned block ${ref.number} is readable by hash`);
        const oldTxs = new Set(old.block.transactions.map(hashTransaction));
        const shared = replacement.block.transactions.filter((tx) => oldTxs.has(hashTransaction(tx)));
        assert.equal(shared.length, 0, `block ${ref.number}: the branches share no transaction`);
        assert.equal(run.devnet.blockByNumber(ref.number)?.hash, replacement.hash, 'blockByNumber follows the new branch');
      });
    }
  });

  it('moves finality forward only, never into a region a reorg replaced', () => {
    for (let i = 1; i < run.finalizedTrail.length; i++) assert.ok(run.finalizedTrail[i]!.number >= run.finalizedTrail[i - 1]!.number);
    for (const { step, index } of reorgs(run)) {
      const finalizedBefore = index === 0 ? 0 : run.finalizedTrail[index - 1]!.number;
      assert.ok(finalizedBefore <= step.forkPoint.number, `finalized ${finalizedBefore} ≤ fork point ${step.forkPoint.number}`);
    }
    for (const finalized of run.finalizedTrail) {
      assert.equal(run.canonical[finalized.number]!.hash, finalized.hash, `finalized block ${finalized.number} stayed canonical`);
    }
    const head = run.devnet.head();
    assert.equal(run.devnet.finalized().number, head.number - 8);
  });

  it('never reorgs when reorgEvery is 0', async () => {
    const quiet = await runDevnet({ reorgEvery: 0, transactionsPerBlock: 2 }, 35);
    assert.ok(quiet.steps.every((step) => step.kind === 'block'));
  });

  it('retains only the last retainBlocks blocks plus genesis, abandoned ones included', async () => {
    const small = await runDevnet({ retainBlocks: 12, reorgEvery: 10, transactionsPerBlock: 1, blobTransactionsPerBlock: 0 }, 60);
    const devnet = small.devnet;
    const head = devnet.head().number;
    assert.equal(devnet.blockByNumber(0)?.hash, devnet.genesis.hash);
    assert.equal(devnet.blockByNumber(head - 11)?.hash, small.canonical[head - 11]!.hash);
    assert.equal(devnet.blockByNumber(head - 12), undefined);
    const [firstReorg] = reorgs(small);
    assert.equal(devnet.blockByHash(firstReorg!.step.abandoned[0]!.hash), undefined, 'old abandoned blocks are pruned');
    assert.ok(devnet.blockByHash(devnet.finalized().hash));
  });

  it('serializes overlapping next() calls into consecutive steps', async () => {
    const devnet = createDevnet({ transactionsPerBlock: 1, blobTransactionsPerBlock: 0 });
    const steps = await Promise.all([devnet.next(), devnet.next(), devnet.next()]);
    assert.deepEqual(steps.map((step) => (step.kind === 'block' ? step.block.header.number : -1)), [1, 2, 3]);
    assert.equal(steps[1]!.kind === 'block' && steps[1]!.block.header.parentHash, steps[0]!.kind === 'block' && steps[0]!.hash);
  });
});
