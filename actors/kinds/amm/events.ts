/**
 * `map` of the amm kind (pure): a block's pool events in log order — Uniswap V2 `Sync` and `Swap`,
 * Uniswap V3 `Initialize`, `Swap`, `Mint` and `Burn` — recognised by signature topic, topic count
 * and data length, decoded to bigints.
 */
import type { BlockInput } from '../sdk/kind.js';
import type { AmmOptions } from './options.js';

export const TOPICS = {
  v2Sync: '0x1c411e9a96e071241c2f21f7726b17ae89e3cab4c78be50e062b03a9fffbbad1',
  v2Swap: '0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822',
  v3Initialize: '0x98636036cb66a9c19a37435efc1e90142190214e8abeb821bdba3f2990dd4c95',
  v3Swap: '0xc42079f94a6350d7e6235f29174924f928cc2ac818eb64fed8004e115fbcca67',
  v3Mint: '0x7a53080ba414158be7ec69b987b5fb7d07dee101fe85488f0853ae16239d0bde',
  v3Burn: '0x0c396cd989a39f4459b5fa1aed6a9a8dcdbc45908acfd67e028cd568da98982c',
} as const;

export type PoolEvent =
  | { readonly type: 'v2.sync'; readonly pool: string; readonly reserve0: bigint; readonly reserve1: bigint }
  | { readonly type: 'v2.swap'; readonly pool: string; readonly amount0In: bigint; readonly amount1In: bigint; readonly amount0Out: bigint; readonly amount1Out: bigint }
  | { readonly type: 'v3.initialize'; readonly pool: string; readonly sqrtPriceX96: bigint; readonly tick: number }
  | { readonly type: 'v3.swap'; readonly pool: string; readonly amount0: bigint; readonly amount1: bigint; readonly sqrtPriceX96: bigint; readonly liquidity: bigint; readonly tick: number }
  | { readonly type: 'v3.mint' | 'v3.burn'; readonly pool: string; readonly tickLower: number; readonly tickUpper: number; readonly amount: bigint };

const TWO_255 = 1n << 255n;
const TWO_256 = 1n << 256n;

function word(data: string, index: number): bigint {
  return BigInt(`0x${data.slice(2 + index * 64, 2 + (index + 1) * 64)}`);
}

/** A two's-complement 256-bit word as a signed value. */
export function signed(value: bigint): bigint {
  return value >= TWO_255 ? value - TWO_256 : value;
}

function int24(value: bigint): number {
  return Number(signed(value));
}

function parse(address: string, topics: readonly string[], data: string): PoolEvent | null {
  const topic = topics[0]?.toLowerCase();
  const words = (data.length - 2) / 64;
  if (topic === TOPICS.v2Sync && topics.length === 1 && words === 2) return { type: 'v2.sync', pool: address, reserve0: word(data, 0), reserve1: word(data, 1) };
  if (topic === TOPICS.v2Swap && topics.length === 3 && words === 4) {
    return { type: 'v2.swap', pool: address, amount0In: word(data, 0), amount1In: word(data, 1), amount0Out: word(data, 2), amount1Out: word(data, 3) };
  }
  if (topic === TOPICS.v3Initialize && topics.length === 1 && words === 2) return { type: 'v3.initialize', pool: address, sqrtPriceX96: word(data, 0), tick: int24(word(data, 1)) };
  if (topic === TOPICS.v3Swap && topics.length === 3 && words === 5) {
    return { type: 'v3.swap', pool: address, amount0: signed(word(data, 0)), amount1: signed(word(data, 1)), sqrtPriceX96: word(data, 2), liquidity: word(data, 3), tick: int24(word(data, 4)) };
  }
  if (topic === TOPICS.v3Mint && topics.length === 4 && words === 4) {
    return { type: 'v3.mint', pool: address, tickLower: int24(BigInt(topics[2]!)), tickUpper: int24(BigInt(topics[3]!)), amount: word(data, 1) };
  }
  if (topic === TOPICS.v3Burn && topics.length === 4 && words === 3) {
    return { type: 'v3.burn', pool: address, tickLower: int24(BigInt(topics[2]!)), tickUpper: int24(BigInt(topics[3]!)), amount: word(data, 0) };
  }
  return null;
}

export function poolEvents(block: BlockInput, options: AmmOptions): PoolEvent[] {
  const events: PoolEvent[] = [];
  for (const receipt of block.receipts ?? []) {
    for (const log of receipt.logs) {
      const pool = log.address.toLowerCase();
      if (options.pools !== null && !options.pools.has(pool)) continue;
      const event = parse(pool, log.topics, log.data);
      if (event) events.push(event);
    }
  }
  return events;
}
