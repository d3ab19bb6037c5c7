/**
 * Verification of a block's material against its header: hash, parent link, uncles hash, transactions root,
 * withdrawals root, blob gas used, and with receipts the receipts root, logs bloom and gas used. Throws
 * `BlockVerificationError` naming the first field that does not match.
 */
import { blobGasUsedBy } from './blob-fee.js';
import { unclesHash } from './block.js';
import { combineBlooms } from './bloom.js';
import { BlockVerificationError, type BlockVerificationField } from './errors.js';
import { hashHeader, type BlockHeader } from './header.js';
import type { Hash } from './hex.js';
import type { Receipt } from './receipt.js';
import { EMPTY_TRIE_ROOT, receiptsRoot, transactionsRoot, withdrawalsRoot } from './trie-root.js';
import type { Transaction } from './transaction-types.js';
import type { Withdrawal } from './withdrawal.js';

export interface VerifyBlockParameters {
  header: BlockHeader;
  transactions: readonly Transaction[];
  /** Required when the header has `withdrawalsRoot` (Shanghai on); must be absent or empty before. */
  withdrawals?: readonly Withdrawal[];
  /** Checked against `sha3Uncles` when given. */
  uncles?: readonly BlockHeader[];
  /** Checked against `receiptsRoot`, `logsBloom` and `gasUsed` when given. */
  receipts?: readonly Receipt[];
  /** The parent header: its hash must be `parentHash` and its number one less. */
  parent?: BlockHeader;
  /** The hash the block was requested or announced by. */
  expectedHash?: Hash;
}

export interface VerifiedBlock {
  hash: Hash;
}

const ABSENT = 'absent';

export async function verifyBlock(params: VerifyBlockParameters): Promise<VerifiedBlock> {
  const { header } = params;
  const hash = hashHeader(header);
  const check = (field: BlockVerificationField, expected: string, actual: string) => {
    if (expected !== actual) throw new BlockVerificationError(field, expected, actual, header.number, hash);
  };
  if (params.expectedHash !== undefined) check('hash', params.expectedHash.toLowerCase(), hash);
  if (params.parent !== undefined) {
    check('parentHash', header.parentHash, hashHeader(params.parent));
    check('number', String(params.parent.number + 1), String(header.number));
  }
  if (params.uncles !== undefined) check('sha3Uncles', header.sha3Uncles, unclesHash(params.uncles));

  const [txRoot, wdRoot, rcRoot] = await Promise.all([
    transactionsRoot(params.transactions),
    params.withdrawals === undefined ? undefined : withdrawalsRoot(params.withdrawals),
    params.receipts === undefined ? undefined : receiptsRoot(params.receipts),
  ]);
  check('transactionsRoot', header.transactionsRoot, txRoot);
  if (header.withdrawalsRoot !== undefined) check('withdrawalsRoot', header.withdrawalsRoot, wdRoot ?? ABSENT);
  else if (wdRoot !== undefined && wdRoot !== EMPTY_TRIE_ROOT) check('withdrawalsRoot', ABSENT, wdRoot);
  check('blobGasUsed', String(header.blobGasUsed ?? 0n), String(blobGasUsedBy(params.transactions)));

  if (params.receipts !== undefined) verifyReceipts(header, params.transactions.length, params.receipts, rcRoot!, check);
  return { hash };
}

function verifyReceipts(
  header: BlockHeader,
  transactionCount: number,
  receipts: readonly Receipt[],
  root: Hash,
  check: (field: BlockVerificationField, expected: string, actual: string) => void,
): void {
  check('receiptCount', String(transactionCount), String(receipts.length));
  check('receiptsRoot', header.receiptsRoot, root);
  check('logsBloom', header.logsBloom, combineBlooms(receipts.map((receipt) => receipt.logsBloom)));
  check('gasUsed', String(header.gasUsed), String(receipts.at(-1)?.cumulativeGasUsed ?? 0n));
}
