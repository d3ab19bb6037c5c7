/**
 * Plans one block's transactions: block 1's setup first, then a shuffled mix of ether and token transfers, swaps,
 * set-code transactions (Prague on), blob transactions (Cancun on) and batch transfers whose gas steers the block
 * towards a drawn fill of its gas limit, so the EIP-1559 base fee moves both ways and stays near 1 gwei.
 */
import type { BlockContext, TransactionDraft } from './block-context.js';
import { draftBlobTransaction, blobFeeWillingness } from './plan-blob.js';
import { draftSetCode } from './plan-set-code.js';
import { SETUP_DRAFTERS } from './plan-setup.js';
import { draftSwap } from './plan-swap.js';
import { draftBatchTransfer, draftEtherTransfer, draftTokenTransfer, TRANSFER_GAS } from './plan-transfers.js';

export interface BlockPlanLimits {
  gasLimit: bigint;
  transactionsPerBlock: number;
  blobTransactionsPerBlock: number;
  maxBlobsPerTransaction: number;
  /** The fork's blob max for this block (0 before Cancun). */
  maxBlobsPerBlock: number;
}

type RegularKind = 'ether' | 'token' | 'swap' | 'setCode' | 'batch';
type Slot = { kind: RegularKind } | { kind: 'blob'; blobs: number; maxFeePerBlobGas: bigint };

/** What each kind usually spends: the batch fillers plan around it. */
const EXPECTED_GAS: Record<Slot['kind'], bigint> = { ether: 21_000n, token: 43_000n, swap: 122_000n, setCode: 70_000n, blob: 40_000n, batch: 0n };
const MIN_BATCH_GAS = TRANSFER_GAS + 30_000n;
const GWEI = 1_000_000_000n;

function regularKind(ctx: BlockContext): RegularKind {
  const roll = ctx.rng.float();
  if (roll < 0.06 && ctx.setCodeActive) return 'setCode';
  return roll < 0.33 ? 'ether' : roll < 0.63 ? 'token' : 'swap';
}

function drawSlots(ctx: BlockContext, limits: BlockPlanLimits): Slot[] {
  const count = limits.transactionsPerBlock;
  const batches = Math.ceil(count / 10);
  const slots: Slot[] = [];
  for (let i = 0; i < count; i++) slots.push({ kind: i < batches ? 'batch' : regularKind(ctx) });
  if (ctx.blobBaseFee !== undefined) {
    const blobTransactions = Math.floor(ctx.rng.float() * (2 * limits.blobTransactionsPerBlock + 1));
    for (let i = 0; i < blobTransactions; i++) {
      slots.push({ kind: 'blob', blobs: ctx.rng.between(1, limits.maxBlobsPerTransaction), maxFeePerBlobGas: blobFeeWillingness(ctx) });
    }
  }
  return ctx.rng.shuffle(slots);
}

/** The gas this block aims at: 5–90 % of the limit around one half, leaning against a base fee far from 1 gwei. */
function gasTarget(ctx: BlockContext, gasLimit: bigint): bigint {
  const lean = ctx.baseFee < GWEI / 2n ? 100 : ctx.baseFee > 2n * GWEI ? -100 : 0;
  const permille = Math.min(900, Math.max(50, 500 + lean + ctx.rng.between(-200, 200)));
  return (gasLimit * BigInt(permille)) / 1000n;
}

class BlockPlanner {
  readonly drafts: TransactionDraft[] = [];
  cumulativeGas = 0n;
  blobs = 0;

  constructor(private readonly ctx: BlockContext, private readonly limits: BlockPlanLimits) {}

  /** Includes the draft when its gas limit fits what is left of the block; applies its state change. */
  include(draft: TransactionDraft): boolean {
    if (draft.gasUsed > draft.unsigned.gas) throw new RangeError(`devnet draft uses ${draft.gasUsed} gas above its limit ${draft.unsigned.gas}`);
    if (this.cumulativeGas + draft.unsigned.gas > this.limits.gasLimit) return false;
    draft.apply(this.ctx.state);
    this.ctx.state.nonces[draft.senderIndex]! += 1n;
    this.cumulativeGas += draft.gasUsed;
    this.drafts.push(draft);
    return true;
  }

  draftSlot(slot: Slot, batchGas: () => bigint): TransactionDraft | undefined {
    const ctx = this.ctx;
    const sender = ctx.rng.int(ctx.accounts.length);
    switch (slot.kind) {
      case 'ether':
        return draftEtherTransfer(ctx, sender);
      case 'token':
        return draftTokenTransfer(ctx, sender) ?? draftEtherTransfer(ctx, sender);
      case 'swap':
        return draftSwap(ctx, sender) ?? draftEtherTransfer(ctx, sender);
      case 'setCode':
        return draftSetCode(ctx, sender);
      case 'batch': {
        const room = this.limits.gasLimit - this.cumulativeGas;
        const gasUsed = batchGas();
        if (gasUsed > room) return undefined;
        const padded = (gasUsed * 12n) / 10n;
        return draftBatchTransfer(ctx, sender, gasUsed, padded < room ? padded : room);
      }
      case 'blob': {
        const blobs = Math.min(slot.blobs, this.limits.maxBlobsPerBlock - this.blobs);
        if (blobs < 1 || slot.maxFeePerBlobGas < ctx.blobBaseFee!) return undefined;
        return draftBlobTransaction(ctx, sender, blobs, slot.maxFeePerBlobGas);
      }
    }
  }
}

/** The block's transaction drafts in block order, with the state in `ctx` advanced past all of them. */
export function planBlockTransactions(ctx: BlockContext, limits: BlockPlanLimits): TransactionDraft[] {
  const planner = new BlockPlanner(ctx, limits);
  if (ctx.number === 1) {
    for (const drafter of SETUP_DRAFTERS) {
      if (!planner.include(drafter(ctx))) throw new RangeError('devnet setup does not fit the block gas limit');
    }
  }
  const slots = drawSlots(ctx, limits);
  const target = gasTarget(ctx, limits.gasLimit);
  let expectedAfter = slots.reduce((sum, slot) => sum + EXPECTED_GAS[slot.kind], 0n);
  let batchesLeft = slots.filter((slot) => slot.kind === 'batch').length;
  for (const slot of slots) {
    expectedAfter -= EXPECTED_GAS[slot.kind];
    const batchGas = () => {
      const share = (target - planner.cumulativeGas - expectedAfter) / BigInt(batchesLeft);
      return share > MIN_BATCH_GAS ? share : MIN_BATCH_GAS;
    };
    const draft = planner.draftSlot(slot, batchGas);
    if (slot.kind === 'batch') batchesLeft -= 1;
    if (draft === undefined || !planner.include(draft)) continue;
    if (draft.unsigned.type === 'eip4844') planner.blobs += draft.unsigned.blobVersionedHashes.length;
  }
  return planner.drafts;
}
