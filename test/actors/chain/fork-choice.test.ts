import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ForkChoiceError, offBranchFinalized, planHead, type ChainView } from '../../../actors/chain/fork-choice.js';
import type { BlockRef } from '../../../store/chain-types.js';
import type { Hex } from '../../../net/eth/hex.js';

const h = (label: string): Hex => `0x${Buffer.from(label.padEnd(32, '.')).toString('hex')}` as Hex;

/** A block tree: label → [number, parent label]; canonical: labels by number. */
function view(tree: Record<string, [number, string | null]>, canonical: string[], finalized: string | null = null): ChainView {
  const ref = (label: string): BlockRef => ({ number: tree[label]![0], hash: h(label) });
  const byHash = new Map(Object.keys(tree).map((label) => [h(label), label]));
  return {
    head: canonical.length ? ref(canonical[canonical.length - 1]!) : null,
    finalized: finalized ? ref(finalized) : null,
    anchor: canonical.length ? tree[canonical[0]!]![0] : null,
    canonicalHash: (n) => {
      const label = canonical.find((l) => tree[l]![0] === n);
      return label ? h(label) : undefined;
    },
    header: (hash) => {
      const label = byHash.get(hash);
      if (!label) return undefined;
      const [number, parent] = tree[label]!;
      return { number, parentHash: parent ? h(parent) : h('none') };
    },
  };
}

const TREE: Record<string, [number, string | null]> = {
  g: [0, null], a1: [1, 'g'], a2: [2, 'a1'], a3: [3, 'a2'], b2: [2, 'a1'], b3: [3, 'b2'], b4: [4, 'b3'], c1: [1, 'g'], c2: [2, 'c1'], c3: [3, 'c2'], c4: [4, 'c3'],
};

test('an empty chain takes the first announced block as its anchor', () => {
  const plan = planHead(view(TREE, []), { number: 3, hash: h('a3') }, 8);
  assert.deepEqual(plan, { undo: [], apply: [{ number: 3, hash: h('a3') }], commonAncestor: null });
});

test('extending the head applies the new blocks oldest first', () => {
  const plan = planHead(view(TREE, ['g', 'a1']), { number: 3, hash: h('a3') }, 8);
  assert.deepEqual(plan.undo, []);
  assert.deepEqual(plan.apply.map((r) => r.number), [2, 3]);
  assert.deepEqual(plan.commonAncestor, { number: 1, hash: h('a1') });
});

test('a reorg undoes the abandoned blocks newest first, then applies the new branch', () => {
  const plan = planHead(view(TREE, ['g', 'a1', 'a2', 'a3']), { number: 4, hash: h('b4') }, 8);
  assert.deepEqual(plan.undo, [{ number: 3, hash: h('a3') }, { number: 2, hash: h('a2') }]);
  assert.deepEqual(plan.apply, [{ number: 2, hash: h('b2') }, { number: 3, hash: h('b3') }, { number: 4, hash: h('b4') }]);
});

test('announcing the current head again changes nothing', () => {
  const plan = planHead(view(TREE, ['g', 'a1']), { number: 1, hash: h('a1') }, 8);
  assert.deepEqual([plan.undo, plan.apply], [[], []]);
});

test('a reorg deeper than the limit is refused', () => {
  assert.throws(() => planHead(view(TREE, ['g', 'a1', 'a2', 'a3']), { number: 4, hash: h('c4') }, 2), (error: unknown) => error instanceof ForkChoiceError && error.reason === 'reorg_too_deep' && /max_reorg_depth = 2/.test(error.message));
});

test('a reorg below the finalized block is refused', () => {
  assert.throws(() => planHead(view(TREE, ['g', 'a1', 'a2', 'a3'], 'a2'), { number: 4, hash: h('b4') }, 8), (error: unknown) => error instanceof ForkChoiceError && error.reason === 'contradicts_finalized');
});

test('a branch whose material is not recorded is refused without failing closed', () => {
  const partial = { ...TREE };
  delete partial.b2;
  assert.throws(() => planHead(view(partial, ['g', 'a1', 'a2']), { number: 4, hash: h('b4') }, 8), (error: unknown) => error instanceof ForkChoiceError && error.reason === 'missing_material');
});

/** A chain anchored at block 2 (nothing below it recorded, as a follower that began there): a2 a3; the upstream's b2 b3 b4 with b1 unknown. */
const ANCHORED: Record<string, [number, string | null]> = { a2: [2, 'a1'], a3: [3, 'a2'], b2: [2, 'b1'], b3: [3, 'b2'], b4: [4, 'b3'], c3: [3, 'c2'], c4: [4, 'c3'] };

test('a branch that reaches the unfinalized anchor without meeting the chain replaces it from the anchor up', () => {
  const plan = planHead(view(ANCHORED, ['a2', 'a3']), { number: 4, hash: h('b4') }, 8);
  assert.deepEqual(plan.undo, [{ number: 3, hash: h('a3') }, { number: 2, hash: h('a2') }]);
  assert.deepEqual(plan.apply, [{ number: 2, hash: h('b2') }, { number: 3, hash: h('b3') }, { number: 4, hash: h('b4') }]);
  assert.equal(plan.commonAncestor, null);
});

test('replacing the chain from its anchor is refused when the anchor is finalized, or deeper than the limit', () => {
  assert.throws(() => planHead(view(ANCHORED, ['a2', 'a3'], 'a2'), { number: 4, hash: h('b4') }, 8), (error: unknown) => error instanceof ForkChoiceError && error.reason === 'contradicts_finalized' && /replaces the recorded chain from block 2/.test(error.message));
  assert.throws(() => planHead(view(ANCHORED, ['a2', 'a3']), { number: 4, hash: h('b4') }, 1), (error: unknown) => error instanceof ForkChoiceError && error.reason === 'reorg_too_deep' && /would undo 2 blocks/.test(error.message));
});

test('a branch whose unknown parent lies above the anchor is still missing material, not a replacement', () => {
  assert.throws(() => planHead(view(ANCHORED, ['a2', 'a3']), { number: 4, hash: h('c4') }, 8), (error: unknown) => error instanceof ForkChoiceError && error.reason === 'missing_material');
});

test('a finalized block off the canonical branch waits while the live chain may still reach it, then disagrees', () => {
  // A follower just reorged at head 157: finality names block 153 from a view the reorg replaced.
  assert.equal(offBranchFinalized(157, 153, 157, 64), 'wait');
  assert.equal(offBranchFinalized(157 + 64, 153 + 64, 157, 64), 'wait', 'the head may move max_reorg_depth blocks on');
  assert.equal(offBranchFinalized(157 + 65, 153 + 65, 157, 64), 'disagree', 'still off the branch after that: finality and the chain disagree');
  // Deeper than max_reorg_depth below the head (beacon finality on mainnet): the live chain can never move there.
  assert.equal(offBranchFinalized(1_000, 1_000 - 65, 1_000, 64), 'disagree');
  assert.equal(offBranchFinalized(1_000, 1_000 - 64, 1_000, 64), 'wait');
});
