/**
 * Verification of a block's stored material — header RLP, body RLP `[transactions, uncles, withdrawals?]`, eth/69
 * receipts — against its header, straight from the bytes: the same checks, in the same order and with the same
 * `BlockVerificationError` fields as `verifyBlock`, without decoding transactions and receipts into objects and
 * encoding them again.
 *
 * - Block hash: keccak256 of the header bytes as given. The header is also decoded, and the decoder accepts only
 *   canonical RLP with no trailing bytes, so these bytes are exactly the encoding the hash is defined over.
 * - Transactions root: the trie values are the canonical transaction encodings, which is what a body holds (a
 *   legacy transaction as its RLP list, a typed one as a byte string holding `type || rlp(payload)`), so each value
 *   is a slice of the body. Each transaction's envelope is checked (a known type, one RLP list of the type's field
 *   count); field contents are left to whoever decodes them, the root having proven they are what the header
 *   commits to. Blob counts (for `blobGasUsed`) are read from field 10 of type-3 payloads.
 * - Receipts root and bloom: eth/69 receipts carry no bloom, so each receipt's bloom is computed from its logs'
 *   addresses and topics (raw bytes, never hex) and the consensus encoding `type || rlp([status, cumulativeGasUsed,
 *   bloom, logs])` is framed around slices of the eth/69 item: status, cumulativeGasUsed and the logs list are
 *   encoded identically in both forms. The header bloom must be the OR of the receipt blooms.
 */
import { addBytesToBloom, BLOOM_BYTES } from './bloom.js';
import { BlockVerificationError, RlpDecodeError, UnsupportedTransactionTypeError, type BlockVerificationField } from './errors.js';
import { GAS_PER_BLOB } from './blob-fee.js';
import { decodeHeader, type BlockHeader } from './header.js';
import { bytesToHex, equalBytes, hexToBytes, type Hash } from './hex.js';
import { keccak256Hex } from './keccak.js';
import { emptySpan, listPrefixLength, readRlpSpan, rlpChildren, rlpCount, rlpFields, rlpSpan, rlpUint, rlpWhole, writeListPrefix, type RlpSpan } from './rlp-walk.js';
import { EMPTY_TRIE_ROOT, orderedTrieRootSync } from './trie-root.js';

export interface BlockMaterialBytes {
  readonly header: Uint8Array;
  /** RLP `[transactions, uncles, withdrawals?]`. */
  readonly body: Uint8Array;
  /** eth/69 receipts `[[type, status, cumulativeGasUsed, logs], …]`; checked against the header when given. */
  readonly receipts?: Uint8Array | null | undefined;
  /** The hash the block was requested or announced by. */
  readonly expectedHash?: Hash | undefined;
}

export interface VerifiedMaterial {
  hash: Hash;
  header: BlockHeader;
  /** Each transaction's canonical encoding (views into the body bytes), in block order. */
  transactions: Uint8Array[];
  /** Each receipt's cumulativeGasUsed, in order; null without receipts. */
  cumulativeGasUsed: bigint[] | null;
}

const ABSENT = 'absent';
const BODY = 'block body';
const TX = 'block body transaction';
const RECEIPT = 'eth/69 receipt';
/** Field counts of typed transaction payloads, by type byte. */
const TYPED_FIELD_COUNTS: readonly (number | undefined)[] = [undefined, 11, 12, 14, 13];
const LEGACY_FIELD_COUNT = 9;
const BLOB_HASHES_FIELD = 10;
/** An RLP string prefix for 256 bytes: 0xb9 0x01 0x00. */
const BLOOM_ITEM_PREFIX = Uint8Array.of(0xb9, 0x01, 0x00);
const BLOOM_ITEM_BYTES = BLOOM_ITEM_PREFIX.length + BLOOM_BYTES;

type Check = (field: BlockVerificationField, expected: string, actual: string) => void;

interface Transactions {
  values: Uint8Array[];
  blobs: number;
}

function transactionsOf(body: Uint8Array, list: RlpSpan): Transactions {
  const values: Uint8Array[] = [];
  let blobs = 0;
  for (const item of rlpChildren(body, list, BODY)) {
    if (item.list) {
      const fields = rlpCount(body, item, 'legacy transaction');
      if (fields !== LEGACY_FIELD_COUNT) throw new RlpDecodeError('legacy transaction', `expected ${LEGACY_FIELD_COUNT} fields, got ${fields}`);
      values.push(body.subarray(item.offset, item.end));
      continue;
    }
    const encoding = body.subarray(item.payload, item.end);
    const type = encoding[0];
    if (type === undefined) throw new RlpDecodeError(TX, 'empty input');
    if (type >= 0xc0) throw new RlpDecodeError(TX, 'a legacy transaction must be an RLP list, not a byte string');
    if (type > 0x7f) throw new RlpDecodeError(TX, `first byte 0x${type.toString(16)} is neither a type nor a list`);
    const fieldCount = TYPED_FIELD_COUNTS[type];
    if (fieldCount === undefined) throw new UnsupportedTransactionTypeError(type);
    const subject = `type ${type} transaction`;
    const payload = rlpSpan(encoding, 1, encoding.length, subject);
    if (payload.end !== encoding.length) throw new RlpDecodeError(subject, `${encoding.length - payload.end} bytes after the payload`);
    const fields = rlpFields(encoding, payload, subject, [fieldCount]);
    if (type === 3) blobs += rlpCount(encoding, fields[BLOB_HASHES_FIELD]!, `${subject} blobVersionedHashes`);
    values.push(encoding);
  }
  return { values, blobs };
}

function withdrawalsOf(body: Uint8Array, list: RlpSpan): Uint8Array[] {
  return rlpChildren(body, list, BODY).map((item) => {
    if (rlpCount(body, item, 'withdrawal') !== 4) throw new RlpDecodeError('withdrawal', 'expected [index, validatorIndex, address, amount]');
    return body.subarray(item.offset, item.end);
  });
}

function requireString(span: RlpSpan, subject: string, field: string, length?: number): void {
  if (span.list) throw new RlpDecodeError(subject, `field ${field}: expected a byte string, got a list`);
  if (length !== undefined && span.end - span.payload !== length) {
    throw new RlpDecodeError(subject, `field ${field}: expected ${length} bytes, got ${span.end - span.payload}`);
  }
}

const log = emptySpan();
const logField = emptySpan();
const topic = emptySpan();

function fail(subject: string, detail: string): never {
  throw new RlpDecodeError(subject, detail);
}

/**
 * ORs the bloom bits of every log's address and topics into the receipt's `bloom` and the block's `blockBloom`
 * (the OR of all receipt blooms, built as it goes), checking each log's shape `[address(20), [topic(32)…], data]`.
 * Walks with three reused spans: a block has hundreds of logs and thousands of topics.
 */
function addLogsToBloom(bloom: Uint8Array, blockBloom: Uint8Array, bytes: Uint8Array, logs: RlpSpan, subject: string): void {
  const where = `${subject} log`;
  for (let offset = logs.payload; offset < logs.end; offset = log.end) {
    readRlpSpan(log, bytes, offset, logs.end, where);
    if (!log.list) fail(where, 'expected [address, topics, data]');
    readRlpSpan(logField, bytes, log.payload, log.end, where);
    if (logField.list || logField.end - logField.payload !== 20) fail(where, 'field address: expected 20 bytes');
    addBytesToBloom(bloom, bytes, logField.payload, logField.end, blockBloom);
    readRlpSpan(logField, bytes, logField.end, log.end, where);
    if (!logField.list) fail(where, 'field topics: expected a list');
    for (let at = logField.payload; at < logField.end; at = topic.end) {
      readRlpSpan(topic, bytes, at, logField.end, where);
      if (topic.list || topic.end - topic.payload !== 32) fail(where, 'field topics[]: expected 32 bytes');
      addBytesToBloom(bloom, bytes, topic.payload, topic.end, blockBloom);
    }
    readRlpSpan(logField, bytes, logField.end, log.end, where);
    if (logField.list) fail(where, 'field data: expected a byte string');
    if (logField.end !== log.end) fail(where, 'expected 3 fields, got more');
  }
}

interface Receipts {
  encodings: Uint8Array[];
  bloom: Uint8Array;
  cumulativeGasUsed: bigint[];
}

/** A receipt's eth/69 fields `[type, status, cumulativeGasUsed, logs]`, checked, and the size of its consensus encoding. */
interface ReceiptLayout {
  type: number;
  fields: RlpSpan[];
  payloadLength: number;
  size: number;
}

function receiptLayout(bytes: Uint8Array, item: RlpSpan): ReceiptLayout {
  if (!item.list) throw new RlpDecodeError(RECEIPT, 'expected [type, status, cumulativeGasUsed, logs]');
  const fields = rlpFields(bytes, item, RECEIPT, [4]);
  const [typeItem, status, cumulative, logs] = fields as [RlpSpan, RlpSpan, RlpSpan, RlpSpan];
  const type = Number(rlpUint(bytes, typeItem, RECEIPT, 'type', 1));
  if (TYPED_FIELD_COUNTS[type] === undefined && type !== 0) throw new UnsupportedTransactionTypeError(type);
  requireString(status, RECEIPT, 'status');
  // A status bit, or before Byzantium a 32-byte state root: encoded the same way in both forms, so copied as is.
  if (status.end - status.payload !== 32 && rlpUint(bytes, status, RECEIPT, 'status', 1) > 1n) {
    throw new RlpDecodeError(RECEIPT, 'field status: expected 0 or 1 (or a 32-byte pre-Byzantium state root)');
  }
  if (!logs.list) throw new RlpDecodeError(RECEIPT, 'field logs: expected a list, got a byte string');
  const payloadLength = (status.end - status.offset) + (cumulative.end - cumulative.offset) + BLOOM_ITEM_BYTES + (logs.end - logs.offset);
  return { type, fields, payloadLength, size: (type === 0 ? 0 : 1) + listPrefixLength(payloadLength) + payloadLength };
}

/**
 * Writes one receipt's consensus encoding at `out[at…]`, framed around slices of its eth/69 item, with its bloom
 * computed in place (and ORed into `blockBloom`).
 */
function writeConsensusReceipt(out: Uint8Array, at: number, bytes: Uint8Array, layout: ReceiptLayout, blockBloom: Uint8Array): void {
  const [, status, cumulative, logs] = layout.fields as [RlpSpan, RlpSpan, RlpSpan, RlpSpan];
  let offset = at;
  if (layout.type !== 0) out[offset++] = layout.type;
  offset = writeListPrefix(out, offset, layout.payloadLength);
  out.set(bytes.subarray(status.offset, status.end), offset);
  offset += status.end - status.offset;
  out.set(bytes.subarray(cumulative.offset, cumulative.end), offset);
  offset += cumulative.end - cumulative.offset;
  out.set(BLOOM_ITEM_PREFIX, offset);
  const bloom = out.subarray(offset + BLOOM_ITEM_PREFIX.length, offset + BLOOM_ITEM_BYTES);
  offset += BLOOM_ITEM_BYTES;
  addLogsToBloom(bloom, blockBloom, bytes, logs, RECEIPT);
  out.set(bytes.subarray(logs.offset, logs.end), offset);
}

/** All consensus encodings in one buffer (one allocation per block, not one per receipt). */
function receiptsOf(bytes: Uint8Array): Receipts {
  const list = rlpWhole(bytes, 'eth/69 receipt list');
  const layouts = rlpChildren(bytes, list, 'eth/69 receipt list').map((item) => receiptLayout(bytes, item));
  const out = new Uint8Array(layouts.reduce((sum, layout) => sum + layout.size, 0));
  const bloom = new Uint8Array(BLOOM_BYTES);
  const encodings: Uint8Array[] = [];
  const cumulativeGasUsed: bigint[] = [];
  let at = 0;
  for (const layout of layouts) {
    writeConsensusReceipt(out, at, bytes, layout, bloom);
    encodings.push(out.subarray(at, at + layout.size));
    cumulativeGasUsed.push(rlpUint(bytes, layout.fields[2]!, RECEIPT, 'cumulativeGasUsed', 8));
    at += layout.size;
  }
  return { encodings, bloom, cumulativeGasUsed };
}

/** Verifies a block's material against its header; throws `BlockVerificationError` naming the first mismatch. */
export function verifyBlockMaterialBytes(input: BlockMaterialBytes): VerifiedMaterial {
  const header = decodeHeader(input.header);
  const hash = keccak256Hex(input.header);
  const check: Check = (field, expected, actual) => {
    if (expected !== actual) throw new BlockVerificationError(field, expected, actual, header.number, hash);
  };
  if (input.expectedHash !== undefined) check('hash', input.expectedHash.toLowerCase(), hash);

  const body = input.body;
  const fields = rlpFields(body, rlpWhole(body, BODY), BODY, [2, 3]);
  const [transactionList, uncleList, withdrawalList] = fields as [RlpSpan, RlpSpan, RlpSpan | undefined];
  if (!uncleList.list) throw new RlpDecodeError(BODY, 'field uncles: expected a list');
  check('sha3Uncles', header.sha3Uncles, keccak256Hex(body.subarray(uncleList.offset, uncleList.end)));

  const transactions = transactionsOf(body, transactionList);
  check('transactionsRoot', header.transactionsRoot, orderedTrieRootSync(transactions.values));
  const withdrawalsRoot = withdrawalList === undefined ? undefined : orderedTrieRootSync(withdrawalsOf(body, withdrawalList));
  if (header.withdrawalsRoot !== undefined) check('withdrawalsRoot', header.withdrawalsRoot, withdrawalsRoot ?? ABSENT);
  else if (withdrawalsRoot !== undefined && withdrawalsRoot !== EMPTY_TRIE_ROOT) check('withdrawalsRoot', ABSENT, withdrawalsRoot);
  check('blobGasUsed', String(header.blobGasUsed ?? 0n), String(BigInt(transactions.blobs) * GAS_PER_BLOB));

  let cumulativeGasUsed: bigint[] | null = null;
  if (input.receipts) {
    const receipts = receiptsOf(input.receipts);
    check('receiptCount', String(transactions.values.length), String(receipts.encodings.length));
    check('receiptsRoot', header.receiptsRoot, orderedTrieRootSync(receipts.encodings));
    if (!equalBytes(hexToBytes(header.logsBloom, BLOOM_BYTES), receipts.bloom)) check('logsBloom', header.logsBloom, bytesToHex(receipts.bloom));
    check('gasUsed', String(header.gasUsed), String(receipts.cumulativeGasUsed.at(-1) ?? 0n));
    cumulativeGasUsed = receipts.cumulativeGasUsed;
  }
  return { hash, header, transactions: transactions.values, cumulativeGasUsed };
}
