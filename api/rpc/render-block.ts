/**
 * `eth_getBlockBy*` results: the header fields plus size, transactions (hashes or full objects),
 * uncles and withdrawals, in alphabetical order as execution clients write them. Each rendering is
 * made once per block and kept as bytes (BlockView.rendered), so a repeated request costs a copy.
 */
import { hashHeader } from '../../net/eth/header.js';
import type { Withdrawal } from '../../net/eth/withdrawal.js';
import type { BlockView } from './block-view.js';
import { array, hexString, object, quantity } from './json-text.js';
import { headerFields, renderHeader } from './render-header.js';
import { renderTransaction } from './render-transaction.js';

function withdrawalJson(w: Withdrawal): string {
  return object([['index', quantity(w.index)], ['validatorIndex', quantity(w.validatorIndex)], ['address', hexString(w.address)], ['amount', quantity(w.amount)]]);
}

function transactionsJson(block: BlockView, full: boolean): string {
  if (!full) return array(block.transactionHashes.map(hexString));
  const senders = block.senders;
  const hashes = block.transactionHashes;
  return array(block.body.transactions.map((tx, index) => renderTransaction(tx, {
    blockHash: block.hash, blockNumber: block.number, blockTimestamp: block.header.timestamp, baseFeePerGas: block.header.baseFeePerGas,
    index, hash: hashes[index]!, from: senders[index]!,
  })));
}

function render(block: BlockView, full: boolean): Buffer {
  const { body } = block;
  const extra: Array<[string, string]> = [
    ['size', quantity(block.size)],
    ['transactions', transactionsJson(block, full)],
    ['uncles', array(body.uncles.map((uncle) => hexString(hashHeader(uncle))))],
  ];
  if (body.withdrawals !== undefined) extra.push(['withdrawals', array(body.withdrawals.map(withdrawalJson))]);
  return Buffer.from(`{${headerFields(block.header, block.hash, extra).map(([name, value]) => `"${name}":${value}`).join(',')}}`);
}

/** The block as JSON bytes, with transaction hashes or full transaction objects. */
export function renderBlock(block: BlockView, full: boolean): Buffer {
  if (full) return (block.rendered.fullBlock ??= render(block, true));
  return (block.rendered.block ??= render(block, false));
}

/** The header alone, as `newHeads` notifications carry it. */
export function renderBlockHeader(block: BlockView): string {
  return (block.rendered.header ??= renderHeader(block.header, block.hash));
}
