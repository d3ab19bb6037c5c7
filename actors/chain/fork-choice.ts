/**
 * Fork choice: given the canonical chain so far and a new head announced by the source, the moves
 * that make the new head canonical — undo the abandoned blocks (newest first), apply the new
 * branch (oldest first). A reorg deeper than the limit, or one that would undo a finalized block,
 * is refused: the chain lane fails closed rather than publish it.
 *
 * Nothing below the chain's anchor (its first canonical block) is recorded, so a branch that reaches the anchor's
 * number without meeting the canonical chain replaces it from there up: the anchor and every block above it are
 * undone and the branch applied, with no common ancestor — allowed only while the anchor is not finalized and
 * within the depth limit. A node that started at an unfinalized block the upstream then abandoned recovers so.
 */
import type { Hex } from '../../net/eth/hex.js';
import type { BlockRef } from '../../store/chain-types.js';

export interface ChainView {
  readonly head: BlockRef | null;
  readonly finalized: BlockRef | null;
  /** The lowest canonical block's number (nothing below it is recorded live); null before the first. */
  readonly anchor: number | null;
  canonicalHash(number: number): Hex | undefined;
  /** Number and parent of a recorded block, or undefined when its material is not recorded. */
  header(hash: Hex): { number: number; parentHash: Hex } | undefined;
}

export interface HeadPlan {
  readonly undo: readonly BlockRef[];
  readonly apply: readonly BlockRef[];
  readonly commonAncestor: BlockRef | null;
}

export type ForkChoiceFailure = 'reorg_too_deep' | 'contradicts_finalized' | 'missing_material';

export class ForkChoiceError extends Error {
  constructor(readonly reason: ForkChoiceFailure, message: string) {
    super(message);
    this.name = 'ForkChoiceError';
  }
}

export function planHead(view: ChainView, newHead: BlockRef, maxReorgDepth: number): HeadPlan {
  if (view.head === null) return { undo: [], apply: [newHead], commonAncestor: null };
  const branch: BlockRef[] = [];
  const maxSteps = Math.max(0, newHead.number - view.head.number) + maxReorgDepth + 1;
  let cursor: BlockRef = newHead;
  while (view.canonicalHash(cursor.number) !== cursor.hash) {
    if (branch.length >= maxSteps) throw tooDeep(view.head, newHead, maxReorgDepth);
    branch.push(cursor);
    const header = view.header(cursor.hash);
    if (!header) throw new ForkChoiceError('missing_material', `block ${cursor.number} (${cursor.hash}) is not recorded; the source must record a branch before announcing it`);
    const parent = view.header(header.parentHash);
    if (!parent && view.anchor !== null && cursor.number <= view.anchor && cursor.number > 0) return replaceFromAnchor(view, view.head, branch, maxReorgDepth);
    if (!parent) throw new ForkChoiceError('missing_material', `parent ${header.parentHash} of block ${cursor.number} is not recorded`);
    cursor = { number: parent.number, hash: header.parentHash };
  }
  const ancestor = cursor;
  const depth = view.head.number - ancestor.number;
  if (depth > maxReorgDepth) throw tooDeep(view.head, newHead, maxReorgDepth, depth);
  if (view.finalized && ancestor.number < view.finalized.number && depth > 0) {
    throw new ForkChoiceError('contradicts_finalized', `head ${newHead.number} (${newHead.hash}) forks at block ${ancestor.number}, below the finalized block ${view.finalized.number} (${view.finalized.hash})`);
  }
  const undo: BlockRef[] = [];
  for (let number = view.head.number; number > ancestor.number; number -= 1) {
    const hash = view.canonicalHash(number);
    if (hash) undo.push({ number, hash });
  }
  return { undo, apply: branch.reverse(), commonAncestor: ancestor };
}

/** The plan for a branch (newest first) whose oldest block is at or below the anchor and attaches to nothing recorded. */
function replaceFromAnchor(view: ChainView, head: BlockRef, branch: readonly BlockRef[], maxReorgDepth: number): HeadPlan {
  const newHead = branch[0]!;
  const from = branch.at(-1)!.number;
  const depth = head.number - from + 1;
  if (depth > maxReorgDepth) throw tooDeep(head, newHead, maxReorgDepth, depth);
  if (view.finalized && view.finalized.number >= from) {
    throw new ForkChoiceError('contradicts_finalized', `head ${newHead.number} (${newHead.hash}) replaces the recorded chain from block ${from}, which would undo the finalized block ${view.finalized.number} (${view.finalized.hash})`);
  }
  const undo: BlockRef[] = [];
  for (let number = head.number; number >= from; number -= 1) {
    const hash = view.canonicalHash(number);
    if (hash) undo.push({ number, hash });
  }
  return { undo, apply: [...branch].reverse(), commonAncestor: null };
}

function tooDeep(head: BlockRef, newHead: BlockRef, limit: number, depth?: number): ForkChoiceError {
  return new ForkChoiceError('reorg_too_deep', `head ${newHead.number} (${newHead.hash}) would undo ${depth ?? 'more than ' + limit} blocks below head ${head.number}; the limit is chain.max_reorg_depth = ${limit}`);
}

/**
 * What to do with a finalized block that is not the canonical block at its number: `wait` while the live chain may
 * still reach its branch — the block lies at most `maxReorgDepth` below the head, and the head has moved at most
 * `maxReorgDepth` blocks on since the disagreement began (`since`) — else `disagree` (the chain lane fails closed).
 */
export function offBranchFinalized(head: number, finalized: number, since: number, maxReorgDepth: number): 'wait' | 'disagree' {
  return head - finalized <= maxReorgDepth && head - since <= maxReorgDepth ? 'wait' : 'disagree';
}
