/** The event logs the devnet's contracts emit: ERC-20 `Transfer`, Uniswap-V2 `Sync` and `Swap`. */
import type { Address, Hash, Log } from '../eth/index.js';
import { addressTopic, eventTopic, uintWord } from './abi.js';

/** keccak256("Transfer(address,address,uint256)") */
export const TRANSFER_TOPIC: Hash = eventTopic('Transfer(address,address,uint256)');
/** keccak256("Sync(uint112,uint112)") */
export const SYNC_TOPIC: Hash = eventTopic('Sync(uint112,uint112)');
/** keccak256("Swap(address,uint256,uint256,uint256,uint256,address)"): `uint` is `uint256` in the canonical signature. */
export const SWAP_TOPIC: Hash = eventTopic('Swap(address,uint256,uint256,uint256,uint256,address)');

const UINT112_LIMIT = 1n << 112n;

export function transferLog(token: Address, from: Address, to: Address, value: bigint): Log {
  return { address: token, topics: [TRANSFER_TOPIC, addressTopic(from), addressTopic(to)], data: `0x${uintWord(value)}` };
}

export function syncLog(pool: Address, reserve0: bigint, reserve1: bigint): Log {
  if (reserve0 >= UINT112_LIMIT || reserve1 >= UINT112_LIMIT) throw new RangeError(`pool ${pool} reserves exceed uint112`);
  return { address: pool, topics: [SYNC_TOPIC], data: `0x${uintWord(reserve0)}${uintWord(reserve1)}` };
}

export interface SwapAmounts {
  amount0In: bigint;
  amount1In: bigint;
  amount0Out: bigint;
  amount1Out: bigint;
}

export function swapLog(pool: Address, sender: Address, amounts: SwapAmounts, to: Address): Log {
  const data = [amounts.amount0In, amounts.amount1In, amounts.amount0Out, amounts.amount1Out].map(uintWord).join('');
  return { address: pool, topics: [SWAP_TOPIC, addressTopic(sender), addressTopic(to)], data: `0x${data}` };
}
