/**
 * The erc20 kind's state: one row per (token, holder) with a non-zero balance, key
 * `0x01 ‖ token (20) ‖ holder (20)`. The row is stored compact and rendered to JSON only where it is
 * served (entity API, typed route, change payloads): `{token, address, balance, lastChange:
 * {blockNumber, blockHash, timestamp}, finality}`. `balance` is a signed decimal string: the net
 * change since the instance's first block, which is the balance when coverage is exact (see query.ts).
 *
 * Stored value: `0x01 (format) ‖ finality (u8) ‖ blockNumber (u64) ‖ timestamp (u64) ‖ blockHash (32)
 * ‖ sign (u8: 0 positive, 1 negative) ‖ magnitude (big-endian, no leading zero bytes)` — ~60 bytes
 * where the JSON row was ~340: at mainnet's density of transfers a batch rewrites tens of thousands of
 * rows spread over the whole table, and LMDB copies every page it touches, so the row size sets the
 * commit's cost. Rows written as JSON by earlier versions (they start with `{`) are still read.
 *
 * Finality is derived where a row is served, from its last change's block and the instance's finalized
 * block (`servedFinality`): a row whose block is at or below it is finalized, else included. So finality
 * rewrites no row (it used to re-mark every row a finalized block touched: a read and a write each, ~a
 * fifth of a commit at mainnet's density), an undo restores the recorded bytes as they are, and the rows
 * are the same bytes whatever order of finality and reorgs led to them. Rows are written with the
 * `included` code; rows an earlier version marked `finalized` (or stored as JSON) are read as marked.
 */
import type { Finality } from '../sdk/tables.js';
import type { KindChange } from '../sdk/kind.js';
import type { ReduceBlock } from '../sdk/define.js';
import type { StateApi } from '../sdk/state.js';
import type { BalanceDeltas } from './transfers.js';

export const BALANCE_KEY_PREFIX = 0x01;
export const BALANCE_KEY_BYTES = 41;

export interface BalanceRow {
  readonly token: string;
  readonly address: string;
  readonly balance: string;
  /** The block of the last change, with its timestamp (the entity API's row timestamp). */
  readonly lastChange: { readonly blockNumber: number; readonly blockHash: string; readonly timestamp: number };
  readonly finality: Finality;
}

export function balanceKey(token: string, holder: string): Buffer {
  const key = Buffer.alloc(BALANCE_KEY_BYTES);
  key[0] = BALANCE_KEY_PREFIX;
  key.write(token.slice(2), 1, 'hex');
  key.write(holder.slice(2), 21, 'hex');
  return key;
}

/** The key of a `map` delta's `token ‖ holder` text (0x, 40 + 40 hex characters): one hex decode. */
function deltaKey(text: string): Buffer {
  const key = Buffer.allocUnsafe(BALANCE_KEY_BYTES);
  key[0] = BALANCE_KEY_PREFIX;
  if (key.write(text.slice(2), 1, 'hex') !== BALANCE_KEY_BYTES - 1) throw new Error(`erc20: malformed holder key text ${text}`);
  return key;
}

export function tokenPrefix(token: string): Buffer {
  return balanceKey(token, `0x${'00'.repeat(20)}`).subarray(0, 21);
}

export function keyParts(key: Buffer): { token: string; address: string } {
  return { token: `0x${key.subarray(1, 21).toString('hex')}`, address: `0x${key.subarray(21, 41).toString('hex')}` };
}

const ROW_FORMAT = 0x01;
const LEGACY_JSON_ROW = 0x7b; // '{'
const HEAD_BYTES = 1 + 1 + 8 + 8 + 32;
const FINALITY_CODES: readonly Finality[] = ['preview', 'included', 'finalized'];
/** The finality code reduce writes: served finality is derived (servedFinality). */
const STORED_FINALITY: Finality = 'included';

/** What a row stores besides its key. */
export interface StoredBalance {
  readonly balance: bigint;
  readonly lastChange: BalanceRow['lastChange'];
  readonly finality: Finality;
}

export function encodeRow(row: StoredBalance): Buffer {
  const negative = row.balance < 0n;
  const digits = (negative ? -row.balance : row.balance).toString(16);
  const magnitude = Buffer.from(digits.length % 2 === 0 ? digits : `0${digits}`, 'hex');
  const out = Buffer.allocUnsafe(HEAD_BYTES + 1 + magnitude.length);
  out[0] = ROW_FORMAT;
  out[1] = FINALITY_CODES.indexOf(row.finality);
  out.writeBigUInt64BE(BigInt(row.lastChange.blockNumber), 2);
  out.writeBigUInt64BE(BigInt(row.lastChange.timestamp), 10);
  out.write(row.lastChange.blockHash.slice(2), 18, 32, 'hex');
  out[HEAD_BYTES] = negative ? 1 : 0;
  magnitude.copy(out, HEAD_BYTES + 1);
  return out;
}

function legacyRow(bytes: Buffer): BalanceRow {
  return JSON.parse(bytes.toString('utf8')) as BalanceRow;
}

/** The stored balance alone (what reduce needs). */
export function storedBalance(bytes: Buffer): bigint {
  if (bytes[0] === LEGACY_JSON_ROW) return BigInt(legacyRow(bytes).balance);
  const magnitude = bytes.length > HEAD_BYTES + 1 ? BigInt(`0x${bytes.toString('hex', HEAD_BYTES + 1)}`) : 0n;
  return bytes[HEAD_BYTES] === 1 ? -magnitude : magnitude;
}

/**
 * The finality a row is served with: finalized when it was stored so (by an earlier version) or its last
 * change is at or below the instance's finalized block (`finalizedNumber`, null: none), else as stored.
 * Read the instance's finalized block before the rows it applies to: it only grows, and a row's block at
 * or below it was final when the row was read.
 */
export function servedFinality(stored: Finality, blockNumber: number, finalizedNumber: number | null): Finality {
  return stored === 'finalized' || (finalizedNumber !== null && blockNumber <= finalizedNumber) ? 'finalized' : stored;
}

/** The block metadata of a stored row, its finality as served with the instance's finalized block `finalizedNumber`. */
export function rowMeta(bytes: Buffer, finalizedNumber: number | null): { readonly lastChange: BalanceRow['lastChange']; readonly finality: Finality } {
  if (bytes[0] === LEGACY_JSON_ROW) {
    const { lastChange, finality } = legacyRow(bytes);
    return { lastChange, finality: servedFinality(finality, lastChange.blockNumber, finalizedNumber) };
  }
  if (bytes[0] !== ROW_FORMAT || bytes.length <= HEAD_BYTES) throw new Error(`erc20 balance row: unknown format ${bytes[0]} (${bytes.length} bytes)`);
  const finality = FINALITY_CODES[bytes[1]!];
  if (finality === undefined) throw new Error(`erc20 balance row: unknown finality code ${bytes[1]}`);
  const blockNumber = Number(bytes.readBigUInt64BE(2));
  return {
    lastChange: { blockNumber, blockHash: `0x${bytes.toString('hex', 18, 50)}`, timestamp: Number(bytes.readBigUInt64BE(10)) },
    finality: servedFinality(finality, blockNumber, finalizedNumber),
  };
}

/** The row stored under `key`, whole, as served with the instance's finalized block `finalizedNumber`. */
export function decodeRow(key: Buffer, bytes: Buffer, finalizedNumber: number | null): BalanceRow {
  if (bytes[0] === LEGACY_JSON_ROW) {
    const row = legacyRow(bytes);
    return { ...row, finality: servedFinality(row.finality, row.lastChange.blockNumber, finalizedNumber) };
  }
  const { token, address } = keyParts(key);
  return { token, address, balance: storedBalance(bytes).toString(), ...rowMeta(bytes, finalizedNumber) };
}

/** The row's JSON as served (field order fixed: the entity API, the typed route and change payloads agree). */
export function rowJson(row: BalanceRow): string {
  return JSON.stringify({ token: row.token, address: row.address, balance: row.balance, lastChange: row.lastChange, finality: row.finality });
}

/**
 * rowJson of a row reduce wrote, by concatenation: token and address are lower-case 0x-hex and the
 * balance a decimal string (nothing to escape), and `lastChangeJson` is JSON.stringify of the block's
 * lastChange, rendered once per block. Byte-identical to rowJson (tested).
 */
export function reducedRowJson(token: string, address: string, balance: string, lastChangeJson: string, finality: Finality): string {
  return `{"token":"${token}","address":"${address}","balance":"${balance}","lastChange":${lastChangeJson},"finality":"${finality}"}`;
}

function putChange(key: Buffer, json: string): KindChange {
  return { kind: 'erc20.balance.put', key: key.toString('hex'), dataJson: json };
}

/** `erc20.balance.delete` payload: the holder whose balance became zero (or whose row an undo removed). */
export function deleteChange(key: Buffer, lastChange: BalanceRow['lastChange'] | null): KindChange {
  const { token, address } = keyParts(key);
  return { kind: 'erc20.balance.delete', key: key.toString('hex'), dataJson: JSON.stringify({ token, address, lastChange }) };
}

/** `reduce`: folds a block's net deltas into the balances and returns one change per holder touched. */
export function reduceBalances(state: StateApi, deltas: BalanceDeltas, block: ReduceBlock): KindChange[] {
  const changes: KindChange[] = [];
  const lastChange = { blockNumber: block.number, blockHash: block.hash, timestamp: block.timestamp };
  const lastChangeJson = JSON.stringify(lastChange);
  // The row's block fields are the same for every holder of the block: encoded once, then copied. The stored
  // finality is always `included` (finality is derived where the row is served); the change carries the block's.
  const head = encodeRow({ balance: 0n, lastChange, finality: STORED_FINALITY }).subarray(0, HEAD_BYTES);
  for (const [text, delta] of deltas) {
    const key = deltaKey(text);
    const stored = state.get(key);
    const balance = (stored === undefined ? 0n : storedBalance(stored)) + delta;
    if (balance === 0n) {
      state.remove(key);
      changes.push(deleteChange(key, lastChange));
    } else {
      state.put(key, rowWithHead(head, balance));
      const token = text.slice(0, 42);
      const address = `0x${text.slice(42)}`;
      // The key's hex is the delta text's (lower-case) behind the key prefix.
      changes.push({ kind: 'erc20.balance.put', key: `01${text.slice(2)}`, dataJson: reducedRowJson(token, address, balance.toString(), lastChangeJson, block.finality) });
    }
  }
  return changes;
}

/** encodeRow with the block fields (`head`: format, finality, number, timestamp, hash) already laid out. */
function rowWithHead(head: Buffer, balance: bigint): Buffer {
  const negative = balance < 0n;
  const digits = (negative ? -balance : balance).toString(16);
  const length = (digits.length + 1) >> 1;
  const out = Buffer.allocUnsafe(HEAD_BYTES + 1 + length);
  head.copy(out, 0);
  out[HEAD_BYTES] = negative ? 1 : 0;
  out.write(digits.length % 2 === 0 ? digits : `0${digits}`, HEAD_BYTES + 1, 'hex');
  return out;
}

/** The change an undo publishes for a key restored to `value` (or removed), with the instance's finalized block `finalizedThrough`. */
export function restoredChange(key: Buffer, value: Buffer | undefined, finalizedThrough: number | null): KindChange {
  return value === undefined ? deleteChange(key, null) : putChange(key, rowJson(decodeRow(key, value, finalizedThrough)));
}
