/**
 * The devnet's memory of its chain: the canonical blocks by number, every retained block (abandoned ones too) by
 * hash, and pruning that keeps only the last `retain` canonical heights (and abandoned blocks at those heights) plus
 * genesis.
 */
import type { Hash } from '../eth/index.js';
import type { BuiltBlock } from './block-builder.js';
import type { BlockRef } from '../../store/chain-types.js';

export class BlockStore {
  private readonly byHash = new Map<Hash, BuiltBlock>();
  private readonly canonical = new Map<number, Hash>();
  /** Abandoned blocks still held by hash, in the order they were abandoned. */
  private abandoned: BlockRef[] = [];
  private oldestCanonical = 1;
  private headNumber = 0;

  constructor(genesis: BuiltBlock, private readonly retain: number) {
    this.byHash.set(genesis.devnetBlock.hash, genesis);
    this.canonical.set(0, genesis.devnetBlock.hash);
  }

  get head(): BlockRef {
    return { number: this.headNumber, hash: this.canonical.get(this.headNumber)! };
  }

  canonicalAt(number: number): BuiltBlock | undefined {
    const hash = this.canonical.get(number);
    return hash === undefined ? undefined : this.byHash.get(hash);
  }

  byBlockHash(hash: Hash): BuiltBlock | undefined {
    return this.byHash.get(hash.toLowerCase() as Hash);
  }

  /** Makes `block` the canonical block at its height; a block already there is kept by hash as abandoned. */
  setCanonical(block: BuiltBlock): void {
    const { number } = block.devnetBlock.block.header;
    const previous = this.canonical.get(number);
    if (previous !== undefined) this.abandoned.push({ number, hash: previous });
    this.byHash.set(block.devnetBlock.hash, block);
    this.canonical.set(number, block.devnetBlock.hash);
    if (number > this.headNumber) this.headNumber = number;
    this.prune();
  }

  private prune(): void {
    const keepFrom = this.headNumber - this.retain + 1;
    for (; this.oldestCanonical < keepFrom; this.oldestCanonical++) {
      const hash = this.canonical.get(this.oldestCanonical);
      if (hash === undefined) continue;
      this.canonical.delete(this.oldestCanonical);
      this.byHash.delete(hash);
    }
    if (this.abandoned.length === 0 || this.abandoned[0]!.number >= keepFrom) return;
    const kept: BlockRef[] = [];
    for (const ref of this.abandoned) {
      if (ref.number >= keepFrom) kept.push(ref);
      else this.byHash.delete(ref.hash);
    }
    this.abandoned = kept;
  }
}
