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
import { addValuesToBlooms, BLOOM_BYTES } from './bloom.js';
import { BlockVerificationError, RlpDecodeError, UnsupportedTransactionTypeError, type BlockVerificationField } from './errors.js';
import { GAS_PER_BLOB } from './blob-fee.js';
import { decodeHeader, type BlockHeader } from './header.js';
import { bytesToHex, equalBytes, hexToBytes, type Hash } from './hex.js';
import { HashPlan } from './keccak-batch.js';
import { emptySpan, listPrefixLength, readRlpSpan, rlpChildren, rlpCount, rlpFields, rlpUint, rlpWhole, writeListPrefix, type MutableRlpSpan, type RlpSpan } from './rlp-walk.js';
import { EMPTY_TRIE_ROOT, planOrderedTrie } from './trie-root.js';

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
/** Error subjects per transaction type, made once (a block has hundreds of transactions). */
const TYPED_SUBJECTS = TYPED_FIELD_COUNTS.map((_, type) => `type ${type} transaction`);
const BLOB_HASHES_SUBJECT = 'type 3 transaction blobVersionedHashes';
const BLOB_HASHES_FIELD = 10;
/** An RLP string prefix for 256 bytes: 0xb9 0x01 0x00. */
const BLOOM_ITEM_PREFIX = Uint8Array.of(0xb9, 0x01, 0x00);
const BLOOM_ITEM_BYTES = BLOOM_ITEM_PREFIX.length + BLOOM_BYTES;

type Check = (field: BlockVerificationField, expected: string, actual: string) => void;

interface Transactions {
  values: Uint8Array[];
  blobs: number;
}

/** Reused spans for the walks below (a block has hundreds of transactions and receipts; spans are not kept). */
const item = emptySpan();
const field = emptySpan();
const payloadSpan = emptySpan();

/**
 * Number of items in the list `list` (a span of `bytes`), walked with a reused span; with `capture` set, the span
 * of field `captureIndex` is copied into it.
 */
function countItems(bytes: Uint8Array, list: RlpSpan, subject: string, captureIndex = -1, capture?: MutableRlpSpan): number {
  if (!list.list) throw new RlpDecodeError(subject, 'expected an RLP list, got a byte string');
  let count = 0;
  for (let offset = list.payload; offset < list.end; count++) {
    readRlpSpan(field, bytes, offset, list.end, subject);
    if (count === captureIndex && capture !== undefined) copySpan(capture, field);
    offset = field.end;
  }
  return count;
}

function copySpan(into: MutableRlpSpan, from: RlpSpan): void {
  into.offset = from.offset;
  into.payload = from.payload;
  into.end = from.end;
  into.list = from.list;
}

const blobHashes = emptySpan();

function transactionsOf(body: Uint8Array, list: RlpSpan): Transactions {
  if (!list.list) throw new RlpDecodeError(BODY, 'expected an RLP list, got a byte string');
  const values: Uint8Array[] = [];
  let blobs = 0;
  for (let offset = list.payload; offset < list.end; offset = item.end) {
    readRlpSpan(item, body, offset, list.end, BODY);
    if (item.list) {
      const fields = countItems(body, item, 'legacy transaction');
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
    const subject = TYPED_SUBJECTS[type]!;
    readRlpSpan(payloadSpan, encoding, 1, encoding.length, subject);
    if (payloadSpan.end !== encoding.length) throw new RlpDecodeError(subject, `${encoding.length - payloadSpan.end} bytes after the payload`);
    const fields = countItems(encoding, payloadSpan, subject, BLOB_HASHES_FIELD, blobHashes);
    if (fields !== fieldCount) throw new RlpDecodeError(subject, `expected ${fieldCount} fields, got ${fields}`);
    if (type === 3) blobs += countItems(encoding, blobHashes, BLOB_HASHES_SUBJECT);
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
 * The bloom values (log addresses and topics) of the receipts written so far into the current receipt buffer, as
 * `[start in the eth/69 bytes, length, offset of the receipt's bloom in the buffer]`, hashed and set in one batch
 * (`addValuesToBlooms`) when the buffer is done with. Grows and is kept from block to block.
 */
let bloomValues = new Uint32Array(3 * 4096);
let bloomValueCount = 0;

function addBloomValue(start: number, end: number, bloomAt: number): void {
  if (3 * (bloomValueCount + 1) > bloomValues.length) {
    const grown = new Uint32Array(bloomValues.length * 2);
    grown.set(bloomValues);
    bloomValues = grown;
  }
  const at = 3 * bloomValueCount++;
  bloomValues[at] = start;
  bloomValues[at + 1] = end - start;
  bloomValues[at + 2] = bloomAt;
}

/** Sets the bits of the values added since the last flush in their receipts' blooms (in `out`) and `blockBloom`. */
function flushBloomValues(bytes: Uint8Array, out: Uint8Array, blockBloom: Uint8Array): void {
  addValuesToBlooms(bytes, bloomValues, bloomValueCount, out, blockBloom);
  bloomValueCount = 0;
}

/**
 * Adds every log's address and topics to the bloom at `bloomAt` (`addBloomValue`), checking each log's shape
 * `[address(20), [topic(32)…], data]`. Walks with three reused spans: a block has hundreds of logs and thousands of
 * topics.
 */
const RECEIPT_LOG = `${RECEIPT} log`;

function addLogsToBloom(bloomAt: number, bytes: Uint8Array, logs: RlpSpan): void {
  const where = RECEIPT_LOG;
  for (let offset = logs.payload; offset < logs.end; offset = log.end) {
    readRlpSpan(log, bytes, offset, logs.end, where);
    if (!log.list) fail(where, 'expected [address, topics, data]');
    readRlpSpan(logField, bytes, log.payload, log.end, where);
    if (logField.list || logField.end - logField.payload !== 20) fail(where, 'field address: expected 20 bytes');
    addBloomValue(logField.payload, logField.end, bloomAt);
    readRlpSpan(logField, bytes, logField.end, log.end, where);
    if (!logField.list) fail(where, 'field topics: expected a list');
    for (let at = logField.payload; at < logField.end; at = topic.end) {
      readRlpSpan(topic, bytes, at, logField.end, where);
      if (topic.list || topic.end - topic.payload !== 32) fail(where, 'field topics[]: expected 32 bytes');
      addBloomValue(topic.payload, topic.end, bloomAt);
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

/** Reused spans of the receipt being converted: `[type, status, cumulativeGasUsed, logs]`. */
const receiptType = emptySpan();
const status = emptySpan();
const cumulative = emptySpan();
const logs = emptySpan();
const RECEIPT_SPANS = [receiptType, status, cumulative, logs];

/**
 * Reads and checks one eth/69 receipt item (`item`) into the spans above; returns its type. The item must hold
 * exactly four fields.
 */
function readReceipt(bytes: Uint8Array, receipt: RlpSpan): number {
  if (!receipt.list) throw new RlpDecodeError(RECEIPT, 'expected [type, status, cumulativeGasUsed, logs]');
  let offset = receipt.payload;
  for (let i = 0; i < 4; i++) {
    if (offset >= receipt.end) throw new RlpDecodeError(RECEIPT, `expected 4 fields, got ${countItems(bytes, receipt, RECEIPT)}`);
    offset = readRlpSpan(RECEIPT_SPANS[i]!, bytes, offset, receipt.end, RECEIPT).end;
  }
  if (offset !== receipt.end) throw new RlpDecodeError(RECEIPT, `expected 4 fields, got ${countItems(bytes, receipt, RECEIPT)}`);
  const type = Number(rlpUint(bytes, receiptType, RECEIPT, 'type', 1));
  if (TYPED_FIELD_COUNTS[type] === undefined && type !== 0) throw new UnsupportedTransactionTypeError(type);
  requireString(status, RECEIPT, 'status');
  // A status bit, or before Byzantium a 32-byte state root: encoded the same way in both forms, so copied as is.
  if (status.end - status.payload !== 32 && rlpUint(bytes, status, RECEIPT, 'status', 1) > 1n) {
    throw new RlpDecodeError(RECEIPT, 'field status: expected 0 or 1 (or a 32-byte pre-Byzantium state root)');
  }
  if (!logs.list) throw new RlpDecodeError(RECEIPT, 'field logs: expected a list, got a byte string');
  return type;
}

/**
 * The consensus encodings are written into one buffer reused from block to block (a block's receipts are about
 * 120 KB: a fresh buffer per block is garbage the collector has to chase); it starts at 64 KB and only grows. The encodings handed to
 * the trie are views into it, used before `receiptsOf` runs again.
 */
let receiptScratch: Uint8Array = new Uint8Array(1 << 16);

function reserveReceiptBytes(at: number, size: number): Uint8Array {
  if (at + size > receiptScratch.length) {
    // Earlier views of this block keep the old buffer alive; the new one starts empty.
    receiptScratch = new Uint8Array(Math.max(receiptScratch.length * 2, size * 2));
    return receiptScratch;
  }
  return receiptScratch;
}

/**
 * One receipt's consensus encoding `type || rlp([status, cumulativeGasUsed, bloom, logs])`, framed around slices
 * of its eth/69 item (the spans above), its bloom zeroed and its values planned (`addBloomValue`): the bits are set
 * by the next `flushBloomValues`.
 */
function writeConsensusReceipt(out: Uint8Array, at: number, bytes: Uint8Array, type: number, payloadLength: number): number {
  let offset = at;
  if (type !== 0) out[offset++] = type;
  offset = writeListPrefix(out, offset, payloadLength);
  // status and cumulativeGasUsed are adjacent, and short (at most 33 + 9 bytes): copied without a view
  for (let i = status.offset; i < cumulative.end; i++) out[offset++] = bytes[i]!;
  out.set(BLOOM_ITEM_PREFIX, offset);
  const bloomAt = offset + BLOOM_ITEM_PREFIX.length;
  out.fill(0, bloomAt, bloomAt + BLOOM_BYTES);
  offset += BLOOM_ITEM_BYTES;
  addLogsToBloom(bloomAt, bytes, logs);
  out.set(bytes.subarray(logs.offset, logs.end), offset);
  return offset + (logs.end - logs.offset);
}

function receiptsOf(bytes: Uint8Array): Receipts {
  const list = rlpWhole(bytes, 'eth/69 receipt list');
  if (!list.list) throw new RlpDecodeError('eth/69 receipt list', 'expected an RLP list, got a byte string');
  const bloom = new Uint8Array(BLOOM_BYTES);
  const encodings: Uint8Array[] = [];
  const cumulativeGasUsed: bigint[] = [];
  let out = receiptScratch;
  let at = 0;
  bloomValueCount = 0; // values of a block that threw before its flush
  for (let offset = list.payload; offset < list.end; offset = item.end) {
    readRlpSpan(item, bytes, offset, list.end, 'eth/69 receipt list');
    const type = readReceipt(bytes, item);
    const payloadLength = (cumulative.end - status.offset) + BLOOM_ITEM_BYTES + (logs.end - logs.offset);
    const size = (type === 0 ? 0 : 1) + listPrefixLength(payloadLength) + payloadLength;
    if (at + size > out.length) {
      flushBloomValues(bytes, out, bloom);
      out = reserveReceiptBytes(at, size);
      at = 0;
    }
    const end = writeConsensusReceipt(out, at, bytes, type, payloadLength);
    encodings.push(out.subarray(at, end));
    cumulativeGasUsed.push(rlpUint(bytes, cumulative, RECEIPT, 'cumulativeGasUsed', 8));
    at = end;
  }
  flushBloomValues(bytes, out, bloom);
  return { encodings, bloom, cumulativeGasUsed };
}

/**
 * One plan for all of a block's hashing but the bloom values' (header, uncles, the transactions and withdrawals
 * tries; then the receipts trie, whose leaves hold the blooms), run in two batches (`keccak-batch.ts`). Per thread; a call
 * finishes with it before returning.
 */
const plan = new HashPlan();

/** The parse steps of `verifyBlockMaterialBytes`, in the order their errors were thrown before hashing was batched. */
const enum Step { Body = 1, Transactions, Withdrawals, Receipts }

/** Verifies a block's material against its header; throws `BlockVerificationError` naming the first mismatch. */
export function verifyBlockMaterialBytes(input: BlockMaterialBytes): VerifiedMaterial {
  const header = decodeHeader(input.header);
  plan.reset();
  return verifyPlanned(input, header);
}

function verifyPlanned(input: BlockMaterialBytes, header: BlockHeader): VerifiedMaterial {
  const hashAt = plan.hashOf(input.header);
  const body = input.body;
  // Everything is parsed and planned first, then hashed in one batch, then checked in the order of the checks. A
  // parse error is held back until the checks before its step have passed, so the same error surfaces as when each
  // step was hashed and checked in turn.
  let failedAt = 0;
  let failure: unknown;
  let step = Step.Body;
  let unclesAt = -1;
  let transactions: Transactions | undefined;
  let transactionsAt = -1;
  let withdrawalsAt = -1;
  let receipts: Receipts | undefined;
  try {
    const fields = rlpFields(body, rlpWhole(body, BODY), BODY, [2, 3]);
    const [transactionList, uncleList, withdrawalList] = fields as [RlpSpan, RlpSpan, RlpSpan | undefined];
    if (!uncleList.list) throw new RlpDecodeError(BODY, 'field uncles: expected a list');
    unclesAt = plan.hashOf(body.subarray(uncleList.offset, uncleList.end));
    step = Step.Transactions;
    transactions = transactionsOf(body, transactionList);
    transactionsAt = planOrderedTrie(plan, transactions.values);
    step = Step.Withdrawals;
    if (withdrawalList !== undefined) withdrawalsAt = planOrderedTrie(plan, withdrawalsOf(body, withdrawalList));
    step = Step.Receipts;
    if (input.receipts) receipts = receiptsOf(input.receipts);
  } catch (error) {
    failedAt = step;
    failure = error;
  }
  plan.run();

  const hash = bytesToHex(plan.hashAt(hashAt));
  const check: Check = (field, expected, actual) => {
    if (expected !== actual) throw new BlockVerificationError(field, expected, actual, header.number, hash);
  };
  const root = (at: number) => bytesToHex(plan.hashAt(at));
  if (input.expectedHash !== undefined) check('hash', input.expectedHash.toLowerCase(), hash);
  if (failedAt === Step.Body) throw failure;
  check('sha3Uncles', header.sha3Uncles, root(unclesAt));
  if (failedAt === Step.Transactions) throw failure;
  check('transactionsRoot', header.transactionsRoot, root(transactionsAt));
  if (failedAt === Step.Withdrawals) throw failure;
  const withdrawalsRoot = withdrawalsAt < 0 ? undefined : root(withdrawalsAt);
  if (header.withdrawalsRoot !== undefined) check('withdrawalsRoot', header.withdrawalsRoot, withdrawalsRoot ?? ABSENT);
  else if (withdrawalsRoot !== undefined && withdrawalsRoot !== EMPTY_TRIE_ROOT) check('withdrawalsRoot', ABSENT, withdrawalsRoot);
  check('blobGasUsed', String(header.blobGasUsed ?? 0n), String(BigInt(transactions!.blobs) * GAS_PER_BLOB));
  if (failedAt === Step.Receipts) throw failure;

  let cumulativeGasUsed: bigint[] | null = null;
  if (receipts !== undefined) {
    check('receiptCount', String(transactions!.values.length), String(receipts.encodings.length));
    const receiptsAt = planOrderedTrie(plan, receipts.encodings);
    plan.run();
    check('receiptsRoot', header.receiptsRoot, root(receiptsAt));
    if (!equalBytes(hexToBytes(header.logsBloom, BLOOM_BYTES), receipts.bloom)) check('logsBloom', header.logsBloom, bytesToHex(receipts.bloom));
    check('gasUsed', String(header.gasUsed), String(receipts.cumulativeGasUsed.at(-1) ?? 0n));
    cumulativeGasUsed = receipts.cumulativeGasUsed;
  }
  return { hash, header, transactions: transactions!.values, cumulativeGasUsed };
}
