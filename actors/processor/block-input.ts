/** Reads one block's recorded material and decodes it for a processor kind. */
import { decodeBlockBody } from '../../net/eth/block.js';
import { decodeHeader } from '../../net/eth/header.js';
import { hexToBytes, type Hex } from '../../net/eth/hex.js';
import { decodeEth69Receipts, type Receipt } from '../../net/eth/receipt.js';
import { rlpChildren, rlpFields, rlpUint, rlpWhole } from '../../net/eth/rlp-walk.js';
import { bodyTransactionEncodings } from '../../net/eth/body-transaction-hashes.js';
import type { Transaction } from '../../net/eth/transaction-types.js';
import { transformTransactions } from '../processors/blobs/transform-transactions.js';
import { getBodyBytes, getHeaderBytes, getReceiptsBytes } from '../../store/chain-material.js';
import type { Store } from '../../store/env.js';
import type { BlockInput, KindNeeds } from './kind.js';
import { bloomMatches, type LogInterest } from '../../net/p2p/log-interest.js';
import { blockRlpSize } from './block-rlp-size.js';

/** Each eth/69 receipt's `cumulativeGasUsed` (`[type, status, cumulativeGasUsed, logs]`), its logs not decoded. */
export function receiptGasUsed(receipts: Uint8Array): Array<Pick<Receipt, 'cumulativeGasUsed'>> {
  const subject = 'eth/69 receipt list';
  return rlpChildren(receipts, rlpWhole(receipts, subject), subject).map((receipt) => {
    const fields = rlpFields(receipts, receipt, 'eth/69 receipt', [4]);
    return { cumulativeGasUsed: rlpUint(receipts, fields[2]!, 'eth/69 receipt', 'cumulativeGasUsed', 8) };
  });
}

/**
 * The block's material as the kind needs it: body and receipts are decoded only when it reads them. A kind that
 * reads receipts gets a block recorded without them only when its header bloom proves it holds none of the logs
 * the kind reads (`interest`; a source skipped them, e.g. the p2p lane's bloom check) — then with no receipts.
 * Otherwise missing receipts (never fetched, or pruned) fail the block: a kind never runs over material it lacks.
 */
export function readBlockInput(store: Store, number: number, hash: Hex, needs: KindNeeds = { bodies: true, receipts: true }, interest: LogInterest | null = null): BlockInput {
  const key = hexToBytes(hash);
  const headerBytes = getHeaderBytes(store, key);
  const bodyBytes = getBodyBytes(store, key);
  if (!headerBytes || !bodyBytes) throw new Error(`block ${number} (${hash}) is in the journal but its material is not recorded`);
  const receiptsBytes = getReceiptsBytes(store, key);
  const blobOnly = needs.partial?.blobTransactionsOnly === true;
  const body = needs.bodies && !blobOnly ? decodeBlockBody(bodyBytes) : null;
  const header = decodeHeader(headerBytes);
  if (needs.receipts && !receiptsBytes && (interest === null || bloomMatches(header, interest))) {
    throw new Error(`block ${number} (${hash}): its receipts are not recorded (not fetched, or pruned), and this kind reads them${interest === null ? '' : ' (its header bloom may hold logs the kind reads)'}`);
  }
  const parentBytes = getHeaderBytes(store, hexToBytes(header.parentHash));
  return {
    number,
    hash,
    header,
    // Partial material (KindNeeds.partial): stubs and gas-only receipts, typed as the whole for the kinds that asked.
    transactions: needs.bodies && blobOnly ? transformTransactions(bodyTransactionEncodings(bodyBytes)) as Transaction[] : body?.transactions ?? [],
    receipts: needs.receipts ? (receiptsBytes ? (needs.partial?.receiptGasOnly ? receiptGasUsed(receiptsBytes) as Receipt[] : decodeEth69Receipts(receiptsBytes)) : []) : null,
    sizeBytes: blockRlpSize(headerBytes, bodyBytes),
    parentTimestamp: parentBytes ? decodeHeader(parentBytes).timestamp : null,
  };
}
