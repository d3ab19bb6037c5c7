/**
 * The erc20 kind's state: one row per (token, holder) with a non-zero balance, key
 * `0x01 ‖ token (20) ‖ holder (20)`, value the rendered row JSON (what the entity API and the change
 * payload serve): `{token, address, balance, lastChange: {blockNumber, blockHash, timestamp}, finality}`.
 * `balance` is a signed decimal string: the net change since the instance's first block, which is
 * the balance when coverage is exact (see query.ts).
 */
import type { Finality } from '../../../store/coverage.js';
import type { KindChange } from '../../processor/kind.js';
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

export function tokenPrefix(token: string): Buffer {
  return balanceKey(token, `0x${'00'.repeat(20)}`).subarray(0, 21);
}

export function keyParts(key: Buffer): { token: string; address: string } {
  return { token: `0x${key.subarray(1, 21).toString('hex')}`, address: `0x${key.subarray(21, 41).toString('hex')}` };
}

export function renderRow(row: BalanceRow): Buffer {
  return Buffer.from(JSON.stringify({ token: row.token, address: row.address, balance: row.balance, lastChange: row.lastChange, finality: row.finality }));
}

export function parseRow(bytes: Buffer): BalanceRow {
  return JSON.parse(bytes.toString('utf8')) as BalanceRow;
}

function putChange(key: Buffer, rendered: Buffer): KindChange {
  return { kind: 'erc20.balance.put', key: key.toString('hex'), dataJson: rendered.toString('utf8') };
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
  for (const [text, delta] of deltas) {
    const token = text.slice(0, 42);
    const address = `0x${text.slice(42)}`;
    const key = balanceKey(token, address);
    const stored = state.get(key);
    const balance = (stored === undefined ? 0n : BigInt(parseRow(stored).balance)) + delta;
    if (balance === 0n) {
      state.remove(key);
      changes.push(deleteChange(key, lastChange));
    } else {
      const rendered = renderRow({ token, address, balance: balance.toString(), lastChange, finality: block.finality });
      state.put(key, rendered);
      changes.push(putChange(key, rendered));
    }
  }
  return changes;
}

/** The change an undo publishes for a key restored to `value` (or removed). */
export function restoredChange(key: Buffer, value: Buffer | undefined): KindChange {
  return value === undefined ? deleteChange(key, null) : putChange(key, value);
}

/** A row whose last change is at or below the finalized block, marked finalized (null: unchanged). */
export function finalizedRow(value: Buffer, through: number): Buffer | null {
  const row = parseRow(value);
  return row.finality !== 'finalized' && row.lastChange.blockNumber <= through ? renderRow({ ...row, finality: 'finalized' }) : null;
}
