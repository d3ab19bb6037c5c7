/**
 * The canonical transaction index of the blocks a history job records, deferred (store/tx-index.ts, "Deferred
 * entries"): a chunk's blocks are listed as pending in the transaction that records them, their entries buffered
 * here, and written sorted once `FLUSH_ENTRIES` (or `FLUSH_RANGES` chunks) are buffered, when the job completes, when the lane has no work left
 * and when it stops. Until then `eth_getTransactionByHash` and `eth_getTransactionReceipt` do not find those
 * transactions (the blocks themselves are served). `recover` indexes what a previous run left pending.
 */
import { transactionHashesOfBody } from '../../net/eth/body-transaction-hashes.js';
import { hexToBytes } from '../../net/eth/hex.js';
import { getBodyBytes } from '../../store/chain-material.js';
import { readHistoryLink } from '../../store/history-canonical.js';
import type { Store } from '../../store/store.js';
import { packTxEntries, readTxIndexPending, TX_ENTRY_BYTES, writeTxIndexSorted, type PendingRange } from '../../store/tx-index.js';

/** Entries buffered before they are written: ~36 MB, ~2,600 mainnet-sized blocks. */
export const FLUSH_ENTRIES = 524_288;
/**
 * Ranges buffered before they are written, whatever their entries: the pending list in the store is rewritten with
 * each chunk, so it stays short on chains with few transactions (early mainnet from Era1 has none for 46,000 blocks).
 */
export const FLUSH_RANGES = 64;

export interface IndexedBlock {
  readonly hash: Uint8Array;
  readonly body: Uint8Array;
}

export class DeferredTxIndex {
  private parts: Buffer[] = [];
  private ranges: PendingRange[] = [];
  private entries = 0;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly store: Store, private readonly flushEntries = FLUSH_ENTRIES) {}

  get buffered(): number {
    return this.entries;
  }

  /** Buffers the entries of `blocks`, already listed as `range` in the store; writes them when enough are buffered. */
  async add(range: PendingRange, blocks: readonly IndexedBlock[]): Promise<void> {
    for (const block of blocks) {
      const part = packTxEntries(block.hash, transactionHashesOfBody(block.body));
      this.parts.push(part);
      this.entries += part.length / TX_ENTRY_BYTES;
    }
    this.ranges.push(range);
    if (this.entries >= this.flushEntries || this.ranges.length >= FLUSH_RANGES) await this.flush();
  }

  /** Writes what is buffered (after any write already under way); resolves when it is committed. */
  flush(): Promise<void> {
    if (this.ranges.length === 0) return this.writing;
    const packed = Buffer.concat(this.parts);
    const ranges = this.ranges;
    this.parts = [];
    this.ranges = [];
    this.entries = 0;
    this.writing = this.writing.catch(() => undefined).then(() => writeTxIndexSorted(this.store, packed, ranges));
    return this.writing;
  }

  /**
   * Indexes the ranges a previous run listed as pending, from the stored links and bodies. Answers the blocks
   * indexed and the numbers of those whose link or body is gone (their entries cannot be rebuilt here).
   */
  async recover(): Promise<{ blocks: number; missing: number[] }> {
    const pending = readTxIndexPending(this.store);
    let blocks = 0;
    const missing: number[] = [];
    for (const range of pending) {
      const found: IndexedBlock[] = [];
      for (let number = range[0]; number <= range[1]; number += 1) {
        const link = readHistoryLink(this.store, number);
        const hash = link ? hexToBytes(link.hash, 32) : null;
        const body = hash ? getBodyBytes(this.store, hash, number) : undefined;
        if (!hash || !body) missing.push(number);
        else found.push({ hash, body });
      }
      blocks += found.length;
      // Listed already: buffered under the same range, which the write takes off the list.
      await this.add(range, found);
    }
    await this.flush();
    return { blocks, missing };
  }
}
