/**
 * Receipts and logs as execution clients render them: a receipt's fields in alphabetical order (geth
 * marshals a map), a log's in geth's struct order, `logIndex` counted across the whole block, the
 * blob fields only for blob transactions. Nothing is invented: `from` is the recovered sender,
 * `gasUsed` the step of `cumulativeGasUsed`, `contractAddress` the CREATE address of sender and nonce.
 */
import { GAS_PER_BLOB, blobBaseFee } from '../../net/eth/blob-fee.js';
import { blobParamsAt, type ForkSchedule } from '../../net/eth/fork-schedule.js';
import { bigintToBytes, bytesToHex, hexToBytes, type Address, type Hex } from '../../net/eth/hex.js';
import { keccak256 } from '../../net/eth/keccak.js';
import type { Log } from '../../net/eth/log.js';
import { encodeRlp } from '../../net/eth/rlp.js';
import { TRANSACTION_TYPE_BYTE } from '../../net/eth/transaction-types.js';
import type { BlockView } from './block-view.js';
import { array, hexString, object, quantity } from './json-text.js';
import { effectiveGasPrice } from './render-transaction.js';

const REMOVED_FALSE = '"removed":false}';

/** The address a contract-creating transaction deploys to: keccak256(rlp([sender, nonce]))[12:]. */
export function createAddress(sender: Address, nonce: bigint): Address {
  return bytesToHex(keccak256(encodeRlp([hexToBytes(sender), bigintToBytes(nonce)])).subarray(12));
}

function renderLog(log: Log, block: BlockView, txHash: Hex, txIndex: number, logIndex: number): string {
  return object([
    ['address', hexString(log.address)],
    ['topics', array(log.topics.map(hexString))],
    ['data', hexString(log.data)],
    ['blockNumber', quantity(block.number)],
    ['transactionHash', hexString(txHash)],
    ['transactionIndex', quantity(txIndex)],
    ['blockHash', hexString(block.hash)],
    ['blockTimestamp', quantity(block.header.timestamp)],
    ['logIndex', quantity(logIndex)],
    ['removed', 'false'],
  ]);
}

/** Every log of the block, per transaction, rendered once; undefined when the block has no receipts. */
export function blockLogs(block: BlockView): readonly string[][] | undefined {
  if (block.rendered.logs) return block.rendered.logs;
  const receipts = block.receipts;
  if (!receipts) return undefined;
  const hashes = block.transactionHashes;
  let logIndex = 0;
  const logs = receipts.map((receipt, txIndex) => receipt.logs.map((log) => renderLog(log, block, hashes[txIndex]!, txIndex, logIndex++)));
  block.rendered.logs = logs;
  return logs;
}

/** The same log JSON as sent for a block that left the canonical chain. */
export function asRemoved(logJson: string): string {
  return `${logJson.slice(0, -REMOVED_FALSE.length)}"removed":true}`;
}

/** Every receipt of the block, rendered once; undefined when the block has no receipts. */
export function blockReceipts(block: BlockView, schedule: ForkSchedule): readonly string[] | undefined {
  if (block.rendered.receipts) return block.rendered.receipts;
  const receipts = block.receipts;
  const logs = blockLogs(block);
  if (!receipts || !logs) return undefined;
  const { header } = block;
  const transactions = block.body.transactions;
  if (transactions.length !== receipts.length) throw new Error(`block ${block.hash} has ${transactions.length} transactions but ${receipts.length} receipts`);
  const senders = block.senders;
  const hashes = block.transactionHashes;
  const blobParams = blobParamsAt(schedule, { number: block.number, timestamp: header.timestamp });
  const blobPrice = blobParams && header.excessBlobGas !== undefined ? blobBaseFee(header.excessBlobGas, blobParams.baseFeeUpdateFraction) : undefined;
  let previousCumulative = 0n;
  const rendered = receipts.map((receipt, index) => {
    const tx = transactions[index]!;
    const gasUsed = receipt.cumulativeGasUsed - previousCumulative;
    previousCumulative = receipt.cumulativeGasUsed;
    const isBlob = tx.type === 'eip4844';
    return object([
      ['blobGasPrice', isBlob && blobPrice !== undefined ? quantity(blobPrice) : undefined],
      ['blobGasUsed', isBlob ? quantity(BigInt(tx.blobVersionedHashes.length) * GAS_PER_BLOB) : undefined],
      ['blockHash', hexString(block.hash)],
      ['blockNumber', quantity(block.number)],
      ['contractAddress', tx.to === null ? hexString(createAddress(senders[index]!, tx.nonce)) : 'null'],
      ['cumulativeGasUsed', quantity(receipt.cumulativeGasUsed)],
      ['effectiveGasPrice', quantity(effectiveGasPrice(tx, header.baseFeePerGas))],
      ['from', hexString(senders[index]!)],
      ['gasUsed', quantity(gasUsed)],
      ['logs', array(logs[index]!)],
      ['logsBloom', hexString(receipt.logsBloom)],
      ['root', receipt.postState !== undefined ? hexString(receipt.postState) : undefined],
      ['status', receipt.postState !== undefined ? undefined : receipt.status === 'success' ? '"0x1"' : '"0x0"'],
      ['to', tx.to === null ? 'null' : hexString(tx.to)],
      ['transactionHash', hexString(hashes[index]!)],
      ['transactionIndex', quantity(index)],
      ['type', quantity(TRANSACTION_TYPE_BYTE[receipt.type])],
    ]);
  });
  block.rendered.receipts = rendered;
  return rendered;
}
