/**
 * The chain journal value: one move of the canonical-chain tracker, the ordered truth every
 * processor follows. Stored in `chain.journal` under a u64 journal sequence key.
 *
 * Value layout (41 bytes): op u8 (1 apply, 2 undo, 3 finalize) ‖ block number u64 ‖ block hash (32).
 */
import { readU64, u64Key } from './keys.js';

export type JournalOp = 'apply' | 'undo' | 'finalize';

export interface JournalMove {
  readonly op: JournalOp;
  readonly number: number;
  readonly hash: Uint8Array;
}

export const JOURNAL_MOVE_BYTES = 41;

const OP_CODES: Record<JournalOp, number> = { apply: 1, undo: 2, finalize: 3 };
const OPS_BY_CODE = new Map<number, JournalOp>(Object.entries(OP_CODES).map(([op, code]) => [code, op as JournalOp]));

export function encodeJournalMove(move: JournalMove): Buffer {
  if (move.hash.length !== 32) throw new RangeError(`journal move hash must be 32 bytes, got ${move.hash.length}`);
  const value = Buffer.allocUnsafe(JOURNAL_MOVE_BYTES);
  value[0] = OP_CODES[move.op];
  u64Key(move.number).copy(value, 1);
  value.set(move.hash, 9);
  return value;
}

export function decodeJournalMove(value: Uint8Array): JournalMove {
  if (value.length !== JOURNAL_MOVE_BYTES) throw new RangeError(`journal move must be ${JOURNAL_MOVE_BYTES} bytes, got ${value.length}`);
  const op = OPS_BY_CODE.get(value[0] ?? 0);
  if (!op) throw new RangeError(`unknown journal op code ${value[0]}`);
  const number = readU64(value, 1);
  if (number > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`journal block number ${number} is not a safe integer`);
  return { op, number: Number(number), hash: value.slice(9, 41) };
}
