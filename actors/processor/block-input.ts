/** Reads one block's recorded material and decodes it for a processor kind. */
import { decodeBlockBody } from '../../net/eth/block.js';
import { decodeHeader } from '../../net/eth/header.js';
import { bytesToHex, hexToBytes, type Hex } from '../../net/eth/hex.js';
import { decodeEth69Receipts, receiptFromEth69, typeFromByte, type Receipt } from '../../net/eth/receipt.js';
import { decodeRlp } from '../../net/eth/rlp.js';
import { rlpChildren, rlpFields, rlpUint, rlpWhole, type RlpSpan } from '../../net/eth/rlp-walk.js';
import type { Log } from '../../net/eth/log.js';
import { RlpDecodeError } from '../../net/eth/errors.js';
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

function spanEquals(bytes: Uint8Array, span: RlpSpan, value: Uint8Array): boolean {
  if (span.end - span.payload !== value.length) return false;
  for (let i = 0; i < value.length; i += 1) if (bytes[span.payload + i] !== value[i]) return false;
  return true;
}

function spanHex(bytes: Uint8Array, span: RlpSpan): Hex {
  return bytesToHex(bytes.subarray(span.payload, span.end));
}

/**
 * A kind's receipts when it declares a log interest (`BoundKind.logInterest`: the logs it reads): each eth/69 receipt
 * walked without decoding, its type, outcome and `cumulativeGasUsed` read, and only the logs the interest matches
 * decoded (its address among `addresses`, or none given, and one of its topics among `topics`, or none given: the
 * bloom check's rule, per log). The other logs are left out; a receipt's `logsBloom` is still its whole bloom,
 * computed from all its logs when read. The bytes were verified against the receipts root when recorded.
 */
export function receiptsOfInterest(receipts: Uint8Array, interest: LogInterest): Receipt[] {
  const subject = 'eth/69 receipt';
  const addresses = interest.addresses.map((address) => hexToBytes(address));
  const topics = interest.topics.map((topic) => hexToBytes(topic));
  return rlpChildren(receipts, rlpWhole(receipts, 'eth/69 receipt list'), 'eth/69 receipt list').map((item): Receipt => {
    const fields = rlpFields(receipts, item, subject, [4]);
    const type = typeFromByte(Number(rlpUint(receipts, fields[0]!, subject, 'type', 1)));
    const outcome = fields[1]!;
    const postState = !outcome.list && outcome.end - outcome.payload === 32 ? spanHex(receipts, outcome) : undefined;
    const status = postState !== undefined ? 1n : rlpUint(receipts, outcome, subject, 'status', 1);
    if (status > 1n) throw new RlpDecodeError(subject, `field status: expected 0 or 1, got ${status}`);
    const logs: Log[] = [];
    for (const logSpan of rlpChildren(receipts, fields[3]!, subject)) {
      const [address, topicList, data] = rlpFields(receipts, logSpan, `${subject} log`, [3]) as [RlpSpan, RlpSpan, RlpSpan];
      if (address.list || data.list) throw new RlpDecodeError(`${subject} log`, 'expected [address, topics, data]');
      if (addresses.length > 0 && !addresses.some((wanted) => spanEquals(receipts, address, wanted))) continue;
      const logTopics = rlpChildren(receipts, topicList, `${subject} log topics`);
      if (topics.length > 0 && !logTopics.some((topic) => topics.some((wanted) => spanEquals(receipts, topic, wanted)))) continue;
      if (address.end - address.payload !== 20 || logTopics.some((topic) => topic.list || topic.end - topic.payload !== 32)) {
        throw new RlpDecodeError(`${subject} log`, 'expected a 20-byte address and 32-byte topics');
      }
      logs.push({ address: spanHex(receipts, address), topics: logTopics.map((topic) => spanHex(receipts, topic)), data: spanHex(receipts, data) });
    }
    let bloom: Hex | undefined;
    return {
      type,
      status: status === 1n ? 'success' : 'reverted',
      ...(postState === undefined ? {} : { postState }),
      cumulativeGasUsed: rlpUint(receipts, fields[2]!, subject, 'cumulativeGasUsed', 8),
      get logsBloom(): Hex {
        bloom ??= receiptFromEth69(decodeRlp(receipts.subarray(item.offset, item.end), subject)).logsBloom;
        return bloom;
      },
      logs,
    };
  });
}

/**
 * The block's material as the kind needs it: body and receipts are decoded only when it reads them. A kind that
 * reads receipts gets a block recorded without them only when its header bloom proves it holds none of the logs
 * the kind reads (`interest`; a source skipped them, e.g. the p2p lane's bloom check) — then with no receipts.
 * Otherwise missing receipts (never fetched, or pruned) fail the block: a kind never runs over material it lacks.
 * A kind with an `interest` gets only the logs it matches in its receipts (`receiptsOfInterest`): the logs it reads.
 */
export function readBlockInput(store: Store, number: number, hash: Hex, needs: KindNeeds = { bodies: true, receipts: true }, interest: LogInterest | null = null): BlockInput {
  const key = hexToBytes(hash);
  const headerBytes = getHeaderBytes(store, key, number);
  const bodyBytes = getBodyBytes(store, key, number);
  if (!headerBytes || !bodyBytes) throw new Error(`block ${number} (${hash}) is in the journal but its material is not recorded`);
  const receiptsBytes = getReceiptsBytes(store, key, number);
  const blobOnly = needs.partial?.blobTransactionsOnly === true;
  const body = needs.bodies && !blobOnly ? decodeBlockBody(bodyBytes) : null;
  const header = decodeHeader(headerBytes);
  if (needs.receipts && !receiptsBytes && (interest === null || bloomMatches(header, interest))) {
    throw new Error(`block ${number} (${hash}): its receipts are not recorded (not fetched, or pruned), and this kind reads them${interest === null ? '' : ' (its header bloom may hold logs the kind reads)'}`);
  }
  const parentBytes = number > 0 ? getHeaderBytes(store, hexToBytes(header.parentHash), number - 1) : undefined;
  return {
    number,
    hash,
    header,
    // Partial material (KindNeeds.partial): stubs and gas-only receipts, typed as the whole for the kinds that asked.
    transactions: needs.bodies && blobOnly ? transformTransactions(bodyTransactionEncodings(bodyBytes)) as Transaction[] : body?.transactions ?? [],
    receipts: needs.receipts ? (receiptsBytes ? receiptsFor(receiptsBytes, needs, interest) : []) : null,
    sizeBytes: blockRlpSize(headerBytes, bodyBytes),
    parentTimestamp: parentBytes ? decodeHeader(parentBytes).timestamp : null,
  };
}

function receiptsFor(bytes: Uint8Array, needs: KindNeeds, interest: LogInterest | null): Receipt[] {
  if (needs.partial?.receiptGasOnly) return receiptGasUsed(bytes) as Receipt[];
  return interest === null ? decodeEth69Receipts(bytes) : receiptsOfInterest(bytes, interest);
}
