/** Reads one block's recorded material and decodes it for a processor kind. */
import { decodeBlockBody } from '../../net/eth/block.js';
import { decodeHeader } from '../../net/eth/header.js';
import { bytesToHex, hexToBytes, type Hex } from '../../net/eth/hex.js';
import { decodeEth69Receipts, receiptFromEth69, typeFromByte, type Receipt } from '../../net/eth/receipt.js';
import { decodeRlp } from '../../net/eth/rlp.js';
import { emptySpan, readRlpSpan, rlpChildren, rlpCount, rlpFields, rlpUint, rlpWhole, type RlpSpan } from '../../net/eth/rlp-walk.js';
import type { Log } from '../../net/eth/log.js';
import { RlpDecodeError } from '../../net/eth/errors.js';
import { bodyTransactionEncodings } from '../../net/eth/body-transaction-hashes.js';
import type { Transaction } from '../../net/eth/transaction-types.js';
import { blobTransactionsOnly } from '../kinds/sdk/blob-transactions-only.js';
import { getBodyBytes, getHeaderBytes, getReceiptsBytes } from '../../store/chain-material.js';
import type { Store } from '../../store/store.js';
import type { BlockInput, KindNeeds } from '../kinds/sdk/kind.js';
import { bloomMatches, type LogInterest } from '../../net/p2p/log-interest.js';
import { blockRlpSize } from '../../net/eth/block-rlp-size.js';

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
  const logSubject = `${subject} log`;
  const topicsSubject = `${subject} log topics`;
  const addresses = interest.addresses.map((address) => hexToBytes(address));
  const topics = interest.topics.map((topic) => hexToBytes(topic));
  // Hundreds of logs a block: each log's fields and topics are read into spans reused from log to log, and only the
  // logs the interest matches become objects.
  const list = rlpWhole(receipts, 'eth/69 receipt list');
  if (!list.list) throw new RlpDecodeError('eth/69 receipt list', 'expected an RLP list, got a byte string');
  const out: Receipt[] = [];
  for (let offset = list.payload; offset < list.end; offset = item.end) {
    readRlpSpan(item, receipts, offset, list.end, 'eth/69 receipt list');
    const fields = rlpFields(receipts, item, subject, [4]);
    const type = typeFromByte(Number(rlpUint(receipts, fields[0]!, subject, 'type', 1)));
    const outcome = fields[1]!;
    const postState = !outcome.list && outcome.end - outcome.payload === 32 ? spanHex(receipts, outcome) : undefined;
    const status = postState !== undefined ? 1n : rlpUint(receipts, outcome, subject, 'status', 1);
    if (status > 1n) throw new RlpDecodeError(subject, `field status: expected 0 or 1, got ${status}`);
    const logList = fields[3]!;
    if (!logList.list) throw new RlpDecodeError(subject, 'expected an RLP list, got a byte string');
    const logs: Log[] = [];
    for (let at = logList.payload; at < logList.end; at = log.end) {
      readRlpSpan(log, receipts, at, logList.end, subject);
      if (!log.list) throw new RlpDecodeError(logSubject, 'expected an RLP list, got a byte string');
      // [address, topics, data], exactly three.
      if (log.payload >= log.end) throw new RlpDecodeError(logSubject, 'expected 3 fields, got 0');
      readRlpSpan(logAddress, receipts, log.payload, log.end, logSubject);
      if (logAddress.end >= log.end) throw new RlpDecodeError(logSubject, 'expected 3 fields, got 1');
      readRlpSpan(logTopics, receipts, logAddress.end, log.end, logSubject);
      if (logTopics.end >= log.end) throw new RlpDecodeError(logSubject, 'expected 3 fields, got 2');
      readRlpSpan(logData, receipts, logTopics.end, log.end, logSubject);
      if (logData.end !== log.end) throw new RlpDecodeError(logSubject, `expected 3 fields, got ${rlpCount(receipts, log, logSubject)}`);
      if (logAddress.list || logData.list) throw new RlpDecodeError(logSubject, 'expected [address, topics, data]');
      if (addresses.length > 0 && !addresses.some((wanted) => spanEquals(receipts, logAddress, wanted))) continue;
      if (!logTopics.list) throw new RlpDecodeError(topicsSubject, 'expected an RLP list, got a byte string');
      topicStarts.length = 0;
      let wantedTopic = topics.length === 0;
      let wellFormed = logAddress.end - logAddress.payload === 20;
      for (let t = logTopics.payload; t < logTopics.end; t = topic.end) {
        readRlpSpan(topic, receipts, t, logTopics.end, topicsSubject);
        if (topic.list || topic.end - topic.payload !== 32) wellFormed = false;
        if (!wantedTopic && topics.some((wanted) => spanEquals(receipts, topic, wanted))) wantedTopic = true;
        topicStarts.push(topic.payload, topic.end, topic.list ? 1 : 0);
      }
      if (!wantedTopic) continue;
      if (!wellFormed) throw new RlpDecodeError(logSubject, 'expected a 20-byte address and 32-byte topics');
      const logTopicsHex: Hex[] = [];
      for (let t = 0; t < topicStarts.length; t += 3) logTopicsHex.push(rangeHex(receipts, topicStarts[t]!, topicStarts[t + 1]!));
      logs.push({ address: spanHex(receipts, logAddress), topics: logTopicsHex, data: spanHex(receipts, logData) });
    }
    const receiptStart = item.offset;
    const receiptEnd = item.end;
    let bloom: Hex | undefined;
    out.push({
      type,
      status: status === 1n ? 'success' : 'reverted',
      ...(postState === undefined ? {} : { postState }),
      cumulativeGasUsed: rlpUint(receipts, fields[2]!, subject, 'cumulativeGasUsed', 8),
      get logsBloom(): Hex {
        bloom ??= receiptFromEth69(decodeRlp(receipts.subarray(receiptStart, receiptEnd), subject)).logsBloom;
        return bloom;
      },
      logs,
    });
  }
  return out;
}

/** Spans reused by `receiptsOfInterest` (one walk at a time per thread). */
const item = emptySpan();
const log = emptySpan();
const logAddress = emptySpan();
const logTopics = emptySpan();
const logData = emptySpan();
const topic = emptySpan();
/** A log's topics as (payload, end, list) triples, reused. */
const topicStarts: number[] = [];

function rangeHex(bytes: Uint8Array, start: number, end: number): Hex {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('hex')}`;
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
    transactions: needs.bodies && blobOnly ? blobTransactionsOnly(bodyTransactionEncodings(bodyBytes)) as Transaction[] : body?.transactions ?? [],
    receipts: needs.receipts ? (receiptsBytes ? receiptsFor(receiptsBytes, needs, interest) : []) : null,
    sizeBytes: blockRlpSize(headerBytes, bodyBytes),
    parentTimestamp: parentBytes ? decodeHeader(parentBytes).timestamp : null,
  };
}

function receiptsFor(bytes: Uint8Array, needs: KindNeeds, interest: LogInterest | null): Receipt[] {
  if (needs.partial?.receiptGasOnly) return receiptGasUsed(bytes) as Receipt[];
  return interest === null ? decodeEth69Receipts(bytes) : receiptsOfInterest(bytes, interest);
}
