/**
 * The amm kind's state: one row per pool, key `0x02 ‖ pool (20)`, value the rendered row JSON.
 * V2 pairs: `reserve0`/`reserve1` from the last `Sync`; V3 pools: `sqrtPriceX96`, `tick` and in-range
 * `liquidity` from `Initialize`/`Swap`, with `Mint`/`Burn` moving in-range liquidity when the position
 * spans the current tick. Both: cumulative swap count and volumes (token0 and token1 amounts moved,
 * in and out). Every quantity is a lossless decimal string.
 */
import type { Finality } from '../sdk/tables.js';
import type { KindChange } from '../sdk/kind.js';
import type { ReduceBlock } from '../sdk/define.js';
import type { StateApi } from '../sdk/state.js';
import type { PoolEvent } from './events.js';

export const POOL_KEY_PREFIX = 0x02;
export const POOL_KEY_BYTES = 21;

export interface PoolRow {
  readonly pool: string;
  readonly protocol: 'uniswap_v2' | 'uniswap_v3';
  /** V2 only (null before the first Sync). */
  readonly reserve0: string | null;
  readonly reserve1: string | null;
  /** V3 only (null before Initialize or the first Swap). */
  readonly sqrtPriceX96: string | null;
  readonly tick: number | null;
  readonly liquidity: string | null;
  readonly swapCount: string;
  readonly volume0: string;
  readonly volume1: string;
  /** The block of the last change, with its timestamp (the entity API's row timestamp). */
  readonly lastChange: { readonly blockNumber: number; readonly blockHash: string; readonly timestamp: number };
  readonly finality: Finality;
}

export function poolKey(pool: string): Buffer {
  const key = Buffer.alloc(POOL_KEY_BYTES);
  key[0] = POOL_KEY_PREFIX;
  key.write(pool.slice(2), 1, 'hex');
  return key;
}

export function poolOfKey(key: Buffer): string {
  return `0x${key.subarray(1, 21).toString('hex')}`;
}

export function renderPool(row: PoolRow): Buffer {
  return Buffer.from(JSON.stringify({
    pool: row.pool, protocol: row.protocol, reserve0: row.reserve0, reserve1: row.reserve1, sqrtPriceX96: row.sqrtPriceX96, tick: row.tick, liquidity: row.liquidity,
    swapCount: row.swapCount, volume0: row.volume0, volume1: row.volume1, lastChange: row.lastChange, finality: row.finality,
  }));
}

export function parsePool(bytes: Buffer): PoolRow {
  return JSON.parse(bytes.toString('utf8')) as PoolRow;
}

function fresh(pool: string, protocol: PoolRow['protocol'], block: ReduceBlock): PoolRow {
  return {
    pool, protocol, reserve0: null, reserve1: null, sqrtPriceX96: null, tick: null, liquidity: null, swapCount: '0', volume0: '0', volume1: '0',
    lastChange: { blockNumber: block.number, blockHash: block.hash, timestamp: block.timestamp }, finality: block.finality,
  };
}

const abs = (value: bigint) => (value < 0n ? -value : value);
const plus = (decimal: string, amount: bigint) => (BigInt(decimal) + amount).toString();

/** One event folded into a pool's row. */
export function foldEvent(row: PoolRow, event: PoolEvent): PoolRow {
  switch (event.type) {
    case 'v2.sync':
      return { ...row, reserve0: event.reserve0.toString(), reserve1: event.reserve1.toString() };
    case 'v2.swap':
      return {
        ...row, swapCount: plus(row.swapCount, 1n),
        volume0: plus(row.volume0, event.amount0In + event.amount0Out), volume1: plus(row.volume1, event.amount1In + event.amount1Out),
      };
    case 'v3.initialize':
      return { ...row, sqrtPriceX96: event.sqrtPriceX96.toString(), tick: event.tick, liquidity: row.liquidity ?? '0' };
    case 'v3.swap':
      return {
        ...row, sqrtPriceX96: event.sqrtPriceX96.toString(), tick: event.tick, liquidity: event.liquidity.toString(),
        swapCount: plus(row.swapCount, 1n), volume0: plus(row.volume0, abs(event.amount0)), volume1: plus(row.volume1, abs(event.amount1)),
      };
    case 'v3.mint':
    case 'v3.burn': {
      // In-range liquidity moves only when the position spans the current tick (unknown tick: the next Swap sets it).
      if (row.tick === null || row.liquidity === null || !(event.tickLower <= row.tick && row.tick < event.tickUpper)) return row;
      return { ...row, liquidity: plus(row.liquidity, event.type === 'v3.mint' ? event.amount : -event.amount) };
    }
  }
}

function protocolOf(event: PoolEvent): PoolRow['protocol'] {
  return event.type.startsWith('v2.') ? 'uniswap_v2' : 'uniswap_v3';
}

export function poolChange(key: Buffer, rendered: Buffer): KindChange {
  return { kind: 'amm.pool.put', key: key.toString('hex'), dataJson: rendered.toString('utf8') };
}

/** `reduce`: folds the block's events, in log order, into the pools' rows; one change per pool touched. */
export function reducePools(state: StateApi, events: readonly PoolEvent[], block: ReduceBlock): KindChange[] {
  const touched = new Map<string, PoolRow>();
  for (const event of events) {
    const current = touched.get(event.pool) ?? (() => {
      const stored = state.get(poolKey(event.pool));
      return stored === undefined ? fresh(event.pool, protocolOf(event), block) : parsePool(stored);
    })();
    touched.set(event.pool, foldEvent(current, event));
  }
  const changes: KindChange[] = [];
  for (const [pool, row] of touched) {
    const key = poolKey(pool);
    const rendered = renderPool({ ...row, lastChange: { blockNumber: block.number, blockHash: block.hash, timestamp: block.timestamp }, finality: block.finality });
    state.put(key, rendered);
    changes.push(poolChange(key, rendered));
  }
  return changes;
}

/** The change an undo publishes: the restored row, or `amm.pool.delete` when the pool had no row before. */
export function restoredPoolChange(key: Buffer, value: Buffer | undefined): KindChange {
  if (value !== undefined) return poolChange(key, value);
  return { kind: 'amm.pool.delete', key: key.toString('hex'), dataJson: JSON.stringify({ pool: poolOfKey(key) }) };
}

/** A row whose last change is at or below the finalized block, marked finalized (null: unchanged). */
export function finalizedPool(value: Buffer, through: number): Buffer | null {
  const row = parsePool(value);
  return row.finality !== 'finalized' && row.lastChange.blockNumber <= through ? renderPool({ ...row, finality: 'finalized' }) : null;
}
