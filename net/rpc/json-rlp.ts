/**
 * Upstream JSON → the chain tables' bytes, written directly: a block's hash, header RLP, body RLP `[transactions,
 * uncles, withdrawals?]` and eth/69 receipts `[[type, status, cumulativeGasUsed, logs], …]`, each hex field decoded
 * straight into its RLP slot, with no intermediate objects, BigInts or per-item arrays. The bytes are identical to
 * `headerFromJson` / `transactionFromJson` / `receiptFromJson` / `withdrawalFromJson` followed by `encodeHeader`,
 * `encodeBlockBody` and `encodeEth69Receipts` (test/net/rpc/json-rlp.test.ts compares them on mainnet, conformance
 * and devnet blocks of every transaction type).
 *
 * The RLP is written back to front (`BackWriter`, net/rpc/rlp-back-writer.ts): an item's payload is written before
 * its prefix, so a list's length is known when its prefix is written, in one pass and without measuring first.
 * Fields and list items are therefore visited last to first.
 *
 * Every check the object path makes is made here too: field presence, JSON types, hex validity, fixed widths,
 * quantities' widths as the encoders bound them (64-bit nonces, gas, …), transaction types, legacy `v` against
 * `chainId`, y-parity, receipt status, the header's fork shape. What fails throws only a cheap `JsonRlpReject`
 * naming the field; `writeMaterial` (net/rpc/convert.ts) then runs the object path on the same JSON, which throws the error the
 * node has always given for it (`UpstreamFormatError` / `InvalidFieldError`, naming the block, transaction, receipt
 * or log and the field), so an error is the same whichever path met it.
 */
import { BackWriter, JsonRlpReject, nibble } from './rlp-back-writer.js';

type Json = Readonly<Record<string, unknown>>;

export { BackWriter, JsonRlpReject } from './rlp-back-writer.js';

function has(json: Json, name: string): boolean {
  const value = json[name];
  return value !== undefined && value !== null;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function object(value: unknown, field: string): Json {
  if (!isObject(value)) throw new JsonRlpReject(field);
  return value;
}

function list(json: Json, name: string): readonly unknown[] {
  const value = json[name];
  if (!Array.isArray(value)) throw new JsonRlpReject(name);
  return value;
}

/** A quantity's value as a number, for the small ones the writer branches on (types, parities, status); -1 when above 2^53 - 1. */
function smallQuantity(value: unknown, field: string): number {
  if (typeof value !== 'string' || value.length < 3 || value.charCodeAt(0) !== 48 || value.charCodeAt(1) !== 120) throw new JsonRlpReject(field);
  let result = 0;
  for (let at = 2; at < value.length; at += 1) {
    const digit = nibble(value, at);
    if (digit < 0) throw new JsonRlpReject(field);
    result = result * 16 + digit;
  }
  return Number.isSafeInteger(result) ? result : -1;
}

const U64 = 16;
const U256 = 64;
const UNBOUNDED = Infinity;

/** A JSON-RPC transaction object → its block-body item (a legacy transaction's RLP list; a typed one's canonical bytes as a string item). */
export function writeTransaction(w: BackWriter, tx: unknown): void {
  if (typeof tx === 'string') throw new JsonRlpReject('transactions');
  const t = object(tx, '(itself)');
  const type = has(t, 'type') ? smallQuantity(t.type, 'type') : 0;
  if (type < 0 || type > 4) throw new JsonRlpReject('type');
  const input = has(t, 'input') ? t.input : t.data;
  const start = w.written;
  if (type === 0) {
    writeLegacySignature(w, t);
    w.dataItem(input, 'input');
    w.quantityItem(t.value, U256, 'value');
    nullableAddress(w, t);
    w.quantityItem(t.gas, U64, 'gas');
    w.quantityItem(t.gasPrice, U256, 'gasPrice');
    w.quantityItem(t.nonce, U64, 'nonce');
    w.list(start);
    return;
  }
  w.quantityItem(t.s, U256, 's');
  w.quantityItem(t.r, U256, 'r');
  w.byte(parity(t) === 1 ? 0x01 : 0x80);
  if (type === 3) {
    const hashes = w.written;
    const versioned = list(t, 'blobVersionedHashes');
    for (let i = versioned.length - 1; i >= 0; i -= 1) w.fixedItem(versioned[i], 32, 'blobVersionedHashes');
    w.list(hashes);
    w.quantityItem(t.maxFeePerBlobGas, U256, 'maxFeePerBlobGas');
  } else if (type === 4) {
    const auths = w.written;
    const entries = list(t, 'authorizationList');
    for (let i = entries.length - 1; i >= 0; i -= 1) writeAuthorization(w, entries[i]);
    w.list(auths);
  }
  writeAccessList(w, t);
  w.dataItem(input, 'input');
  w.quantityItem(t.value, U256, 'value');
  if (type >= 3) w.fixedItem(t.to, 20, 'to');
  else nullableAddress(w, t);
  w.quantityItem(t.gas, U64, 'gas');
  if (type === 1) w.quantityItem(t.gasPrice, U256, 'gasPrice');
  else {
    w.quantityItem(t.maxFeePerGas, U256, 'maxFeePerGas');
    w.quantityItem(t.maxPriorityFeePerGas, U256, 'maxPriorityFeePerGas');
  }
  w.quantityItem(t.nonce, U64, 'nonce');
  w.quantityItem(t.chainId, U256, 'chainId');
  w.list(start);
  w.byte(type);
  w.prefix(w.written - start, 0x80);
}

function nullableAddress(w: BackWriter, t: Json): void {
  if (has(t, 'to')) w.fixedItem(t.to, 20, 'to');
  else w.byte(0x80);
}

/** `v, r, s` of a legacy transaction, written last to first: `v` is 27/28, or EIP-155 (≥ 35, agreeing with a stated `chainId`). */
function writeLegacySignature(w: BackWriter, t: Json): void {
  w.quantityItem(t.s, U256, 's');
  w.quantityItem(t.r, U256, 'r');
  const v = t.v;
  const small = smallQuantity(v, 'v');
  if (small === 27 || small === 28) {
    w.byte(small);
    return;
  }
  if (small >= 0 && small < 35) throw new JsonRlpReject('v');
  if (has(t, 'chainId')) {
    // EIP-155: v = chainId × 2 + 35 + parity; numbers while they are exact, bigints beyond.
    const agrees = small >= 0 ? smallQuantity(t.chainId, 'chainId') === Math.floor((small - 35) / 2) : bigQuantity(t.chainId, 'chainId') === (BigInt(v as string) - 35n) / 2n;
    if (!agrees) throw new JsonRlpReject('chainId');
  }
  w.quantityItem(v, UNBOUNDED, 'v');
}

/** A quantity of any width as a bigint (validated as `smallQuantity` does). */
function bigQuantity(value: unknown, field: string): bigint {
  smallQuantity(value, field);
  return BigInt(value as string);
}

/** `yParity`, or `v` when an older node omits it: 0/27 → 0, 1/28 → 1. */
function parity(json: Json): 0 | 1 {
  const field = has(json, 'yParity') ? 'yParity' : 'v';
  const value = smallQuantity(json[field], field);
  if (value === 0 || value === 27) return 0;
  if (value === 1 || value === 28) return 1;
  throw new JsonRlpReject(field);
}

function writeAccessList(w: BackWriter, t: Json): void {
  const start = w.written;
  if (has(t, 'accessList')) {
    const entries = list(t, 'accessList');
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      const entry = object(entries[i], 'accessList');
      const item = w.written;
      const keysStart = w.written;
      const keys = list(entry, 'storageKeys');
      for (let k = keys.length - 1; k >= 0; k -= 1) w.fixedItem(keys[k], 32, 'storageKeys');
      w.list(keysStart);
      w.fixedItem(entry.address, 20, 'address');
      w.list(item);
    }
  }
  w.list(start);
}

function writeAuthorization(w: BackWriter, entry: unknown): void {
  const a = object(entry, 'authorizationList');
  const start = w.written;
  w.quantityItem(a.s, U256, 's');
  w.quantityItem(a.r, U256, 'r');
  w.byte(parity(a) === 1 ? 0x01 : 0x80);
  w.quantityItem(a.nonce, U64, 'nonce');
  w.fixedItem(a.address, 20, 'address');
  w.quantityItem(a.chainId, U256, 'chainId');
  w.list(start);
}

/** A JSON-RPC receipt → its eth/69 item `[type, status | root, cumulativeGasUsed, logs]`. */
export function writeReceipt(w: BackWriter, receipt: unknown): void {
  const r = object(receipt, '(itself)');
  const type = has(r, 'type') ? smallQuantity(r.type, 'type') : 0;
  if (type < 0 || type > 4) throw new JsonRlpReject('type');
  const start = w.written;
  const logsStart = w.written;
  const logs = list(r, 'logs');
  for (let i = logs.length - 1; i >= 0; i -= 1) {
    const log = object(logs[i], 'log');
    const logStart = w.written;
    w.dataItem(log.data, 'data');
    const topicsStart = w.written;
    const topics = list(log, 'topics');
    for (let t = topics.length - 1; t >= 0; t -= 1) w.fixedItem(topics[t], 32, 'topics');
    w.list(topicsStart);
    w.fixedItem(log.address, 20, 'address');
    w.list(logStart);
  }
  w.list(logsStart);
  w.quantityItem(r.cumulativeGasUsed, U64, 'cumulativeGasUsed');
  if (has(r, 'status')) {
    const status = smallQuantity(r.status, 'status');
    if (status !== 0 && status !== 1) throw new JsonRlpReject('status');
    w.byte(status === 1 ? 0x01 : 0x80);
  } else {
    if (!has(r, 'root')) throw new JsonRlpReject('status');
    w.fixedItem(r.root, 32, 'root');
  }
  w.byte(type === 0 ? 0x80 : type);
  w.list(start);
}

/** A JSON-RPC withdrawal → `[index, validatorIndex, address, amount]`. */
export function writeWithdrawal(w: BackWriter, withdrawal: unknown): void {
  const x = object(withdrawal, '(itself)');
  const start = w.written;
  w.quantityItem(x.amount, U64, 'amount');
  w.fixedItem(x.address, 20, 'address');
  w.quantityItem(x.validatorIndex, U64, 'validatorIndex');
  w.quantityItem(x.index, U64, 'index');
  w.list(start);
}

/** The header's optional fields in encoding order: each is taken when present, and a later one needs every earlier one. */
const OPTIONAL: readonly (readonly [string, 'quantity' | 'u64' | 'hash'])[] = [
  ['baseFeePerGas', 'quantity'],
  ['withdrawalsRoot', 'hash'],
  ['blobGasUsed', 'u64'],
  ['excessBlobGas', 'u64'],
  ['parentBeaconBlockRoot', 'hash'],
  ['requestsHash', 'hash'],
];

/** A JSON-RPC block's header fields → the header's RLP list. */
export function writeHeader(w: BackWriter, b: Json): void {
  let count = 0;
  while (count < OPTIONAL.length && has(b, OPTIONAL[count]![0])) count += 1;
  for (let i = count; i < OPTIONAL.length; i += 1) if (has(b, OPTIONAL[i]![0])) throw new JsonRlpReject(OPTIONAL[i]![0]);
  // Cancun adds three fields at once: blobGasUsed without parentBeaconBlockRoot is not a header shape.
  if (count === 3 || count === 4) throw new JsonRlpReject('parentBeaconBlockRoot');
  const start = w.written;
  for (let i = count - 1; i >= 0; i -= 1) {
    const [name, kind] = OPTIONAL[i]!;
    if (kind === 'hash') w.fixedItem(b[name], 32, name);
    else w.quantityItem(b[name], kind === 'u64' ? U64 : U256, name);
  }
  w.fixedItem(b.nonce, 8, 'nonce');
  w.fixedItem(b.mixHash, 32, 'mixHash');
  w.dataItem(b.extraData, 'extraData');
  safeNumber(b.timestamp, 'timestamp');
  w.quantityItem(b.timestamp, U64, 'timestamp');
  w.quantityItem(b.gasUsed, U64, 'gasUsed');
  w.quantityItem(b.gasLimit, U64, 'gasLimit');
  safeNumber(b.number, 'number');
  w.quantityItem(b.number, U64, 'number');
  w.quantityItem(b.difficulty, U256, 'difficulty');
  w.fixedItem(b.logsBloom, 256, 'logsBloom');
  w.fixedItem(b.receiptsRoot, 32, 'receiptsRoot');
  w.fixedItem(b.transactionsRoot, 32, 'transactionsRoot');
  w.fixedItem(b.stateRoot, 32, 'stateRoot');
  w.fixedItem(b.miner, 20, 'miner');
  w.fixedItem(b.sha3Uncles, 32, 'sha3Uncles');
  w.fixedItem(b.parentHash, 32, 'parentHash');
  w.list(start);
}

function safeNumber(value: unknown, field: string): void {
  if (smallQuantity(value, field) < 0) throw new JsonRlpReject(field);
}

/**
 * Where a block's parts lie in the writer, as marks (bytes written) read front to back: hash from `marks[0]` down
 * to `marks[1]`, header to `marks[2]`, body to `marks[3]`, receipts to `marks[4]` (equal to `marks[3]` without).
 */
export interface MaterialMarks {
  readonly marks: readonly [number, number, number, number, number];
  readonly receipts: boolean;
}

/**
 * Writes one block's material (hash, header, body, and its eth/69 receipts when given) into `w`, back to front,
 * and returns where its parts lie; throws `JsonRlpReject` for anything the object path would refuse.
 */
export function writeBlockMaterial(w: BackWriter, block: unknown, receipts: readonly unknown[] | null): MaterialMarks {
  const b = object(block, '(itself)');
  const end = w.written;
  if (receipts !== null) {
    for (let i = receipts.length - 1; i >= 0; i -= 1) writeReceipt(w, receipts[i]);
    w.list(end);
  }
  const bodyEnd = w.written;
  // Body: [transactions, uncles, withdrawals?]; post-merge blocks have no uncles.
  const transactions = list(b, 'transactions');
  if (has(b, 'withdrawals')) {
    const withdrawals = list(b, 'withdrawals');
    const start = w.written;
    for (let i = withdrawals.length - 1; i >= 0; i -= 1) writeWithdrawal(w, withdrawals[i]);
    w.list(start);
  }
  if (has(b, 'uncles') && list(b, 'uncles').length > 0) throw new JsonRlpReject('uncles');
  w.byte(0xc0);
  const txs = w.written;
  for (let i = transactions.length - 1; i >= 0; i -= 1) writeTransaction(w, transactions[i]);
  w.list(txs);
  w.list(bodyEnd);
  const headerEnd = w.written;
  writeHeader(w, b);
  const hashEnd = w.written;
  w.fixedRaw(b.hash, 32, 'hash');
  return { marks: [w.written, hashEnd, headerEnd, bodyEnd, end], receipts: receipts !== null };
}

/** The parts of a block written by `writeBlockMaterial`, as views of `w`'s buffer. */
export function materialViews(w: BackWriter, { marks, receipts }: MaterialMarks): { hash: Buffer; header: Buffer; body: Buffer; receipts: Buffer | null } {
  const [start, hashEnd, headerEnd, bodyEnd, end] = marks;
  return {
    hash: w.view(hashEnd, start),
    header: w.view(headerEnd, hashEnd),
    body: w.view(bodyEnd, headerEnd),
    receipts: receipts ? w.view(end, bodyEnd) : null,
  };
}
