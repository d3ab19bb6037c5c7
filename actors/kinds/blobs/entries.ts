/** The key/value rows one transformed block writes to the blob processor's entity table (layout in `keys.ts`). */
import { hexToBytes } from '../sdk/chain.js';
import { blockKey, blockTxIndexKey, txKey } from './keys.js';
import { renderBlock, renderTransaction } from './render.js';
import type { TransformedBlock } from './transform.js';

export interface EntityEntry {
  key: Buffer;
  value: Buffer;
}

/** The block row, then per blob transaction its row and its block-index row (value: the 32-byte hash). */
export function blockEntries(transformed: TransformedBlock): EntityEntry[] {
  const { block, transactions, transactionIndexes } = transformed;
  const entries: EntityEntry[] = [{ key: blockKey(block.blockNumber), value: renderBlock(block) }];
  for (const [row, tx] of transactions.entries()) {
    entries.push({ key: txKey(tx.txHash), value: renderTransaction(tx) });
    entries.push({ key: blockTxIndexKey(block.blockNumber, transactionIndexes[row]!), value: Buffer.from(hexToBytes(tx.txHash, 32)) });
  }
  return entries;
}
