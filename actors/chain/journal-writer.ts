/**
 * The chain lane's writes: canonical numbering and the chain journal, in one transaction per
 * decision, so the journal is always the exact sequence of moves that produced `chain.canonical`.
 */
import { bytesToHex, hexToBytes, type Hex } from '../../net/eth/hex.js';
import { decodeHeader } from '../../net/eth/header.js';
import { transactionHashesOfBody } from '../../net/eth/body-transaction-hashes.js';
import { getBlockNumber, getBodyBytes, getHeaderBytes } from '../../store/chain-material.js';
import { decodeJournalMove, encodeJournalMove, type JournalMove } from '../../store/journal.js';
import { decodeU64KeyAsNumber, u64Key } from '../../store/keys.js';
import { indexTransactions, txIndexIsEmpty, unindexTransactions } from '../../store/tx-index.js';
import type { Store } from '../../store/store.js';
import type { ChainView, HeadPlan } from './fork-choice.js';
import type { BlockRef } from '../../store/chain-types.js';
import { canonicalBase, canonicalHead } from '../../store/chain-heads.js';

export interface ChainState {
  head: BlockRef | null;
  finalized: BlockRef | null;
  /** The last journal sequence written (0 when the journal is empty). */
  sequence: number;
  /** The lowest canonical block (the anchor the chain started from). */
  anchor: number | null;
}

/** Reads the chain lane's state back from the store after a restart. */
export function loadChainState(store: Store): ChainState {
  const head = canonicalHead(store);
  const anchor = canonicalBase(store)?.number ?? null;
  let sequence = 0;
  let finalized: BlockRef | null = null;
  for (const { key, value } of store.chain.journal.getRange({ reverse: true })) {
    if (sequence === 0) sequence = decodeU64KeyAsNumber(key);
    const move = decodeJournalMove(value);
    if (move.op === 'finalize') {
      finalized = { number: move.number, hash: bytesToHex(move.hash) };
      break;
    }
  }
  return { head, finalized, sequence, anchor };
}

export function chainView(store: Store, state: ChainState): ChainView {
  return {
    head: state.head,
    finalized: state.finalized,
    anchor: state.anchor,
    canonicalHash: (number) => {
      const hash = store.chain.canonical.getBinary(u64Key(number));
      return hash ? bytesToHex(hash) : undefined;
    },
    header: (hash: Hex) => {
      const key = hexToBytes(hash);
      const number = getBlockNumber(store, key);
      const bytes = number === undefined ? undefined : getHeaderBytes(store, key, number);
      if (!bytes) return undefined;
      return { number: number!, parentHash: decodeHeader(bytes).parentHash };
    },
  };
}

function move(op: JournalMove['op'], ref: BlockRef): Buffer {
  return encodeJournalMove({ op, number: ref.number, hash: hexToBytes(ref.hash) });
}

/** The transaction hashes of a recorded block; a canonical block without a recorded body is a broken store. */
function blockTransactionHashes(store: Store, hash: Uint8Array, number: number): Uint8Array[] {
  const body = getBodyBytes(store, hash, number);
  if (!body) throw new Error(`block ${bytesToHex(hash)} has no recorded body`);
  return transactionHashesOfBody(body);
}

/**
 * Writes a head plan's moves after journal sequence `sequence`, with the canonical table and the
 * transaction index kept in step, and returns the last sequence written; call inside a write
 * transaction (the chain import commits block material and its moves together this way).
 */
export function writeHeadPlan(store: Store, sequence: number, plan: Pick<HeadPlan, 'undo' | 'apply'>): number {
  for (const ref of plan.undo) {
    const hash = hexToBytes(ref.hash);
    store.chain.journal.put(u64Key(++sequence), move('undo', ref));
    store.chain.canonical.remove(u64Key(ref.number));
    unindexTransactions(store, hash, blockTransactionHashes(store, hash, ref.number));
  }
  for (const ref of plan.apply) {
    const hash = hexToBytes(ref.hash);
    store.chain.journal.put(u64Key(++sequence), move('apply', ref));
    store.chain.canonical.put(u64Key(ref.number), Buffer.from(hash));
    indexTransactions(store, hash, blockTransactionHashes(store, hash, ref.number));
  }
  return sequence;
}

/** Commits a head plan: undo moves, then apply moves (see writeHeadPlan). */
export async function commitHead(store: Store, state: ChainState, plan: HeadPlan): Promise<void> {
  let sequence = state.sequence;
  await store.write(() => {
    sequence = writeHeadPlan(store, sequence, plan);
  });
  state.sequence = sequence;
  const last = plan.apply[plan.apply.length - 1];
  if (last) state.head = last;
  // No common ancestor: the first block ever applied, or a branch that replaced the chain from its anchor up.
  if (plan.commonAncestor === null && plan.apply.length > 0) state.anchor = plan.apply[0]!.number;
}

export async function commitFinalized(store: Store, state: ChainState, finalized: BlockRef): Promise<void> {
  const sequence = state.sequence + 1;
  await store.write(() => {
    store.chain.journal.put(u64Key(sequence), move('finalize', finalized));
  });
  state.sequence = sequence;
  state.finalized = finalized;
}

/**
 * Indexes the transactions of every canonical block when the index is empty: a store written
 * before the index existed gets one at the chain lane's first start. Returns the blocks indexed.
 */
export async function backfillTxIndex(store: Store): Promise<number> {
  if (!txIndexIsEmpty(store)) return 0;
  let blocks = 0;
  await store.write(() => {
    for (const { key, value } of store.chain.canonical.getRange({})) {
      indexTransactions(store, value, blockTransactionHashes(store, value, decodeU64KeyAsNumber(key)));
      blocks += 1;
    }
  });
  return blocks;
}
