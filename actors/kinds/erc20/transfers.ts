/**
 * `map` of the erc20 kind (pure): a block's ERC-20 `Transfer(address indexed from, address indexed to,
 * uint256 value)` logs — signature topic, exactly three topics, a 32-byte value — of the configured
 * tokens, netted per (token, holder). Logs of failed transactions are not in receipts.
 *
 * The zero address is not a holder: a `Transfer` from it is a mint (only the recipient is credited)
 * and one to it a burn (only the sender is debited), so every balance computed from the token's
 * deployment is the holder's `balanceOf`, never negative, and the sum of balances is the supply.
 */
import type { BlockInput } from '../sdk/kind.js';
import type { Erc20Options } from './options.js';

export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** Net balance change per `token ‖ holder` (both lower-case 0x-hex, 84 characters), in first-seen order. */
export type BalanceDeltas = Map<string, bigint>;

export const ZERO_ADDRESS = `0x${'00'.repeat(20)}`;

export function holderKeyText(token: string, holder: string): string {
  return `${token}${holder.slice(2)}`;
}

function topicAddress(topic: string): string {
  return `0x${topic.slice(26).toLowerCase()}`;
}

function add(deltas: BalanceDeltas, key: string, amount: bigint): void {
  deltas.set(key, (deltas.get(key) ?? 0n) + amount);
}

export function transferDeltas(block: BlockInput, options: Erc20Options): BalanceDeltas {
  const deltas: BalanceDeltas = new Map();
  for (const receipt of block.receipts ?? []) {
    for (const log of receipt.logs) {
      if (log.topics.length !== 3 || log.topics[0]!.toLowerCase() !== TRANSFER_TOPIC || log.data.length !== 66) continue;
      const token = log.address.toLowerCase();
      if (options.tokens !== null && !options.tokens.has(token)) continue;
      const value = BigInt(log.data);
      if (value === 0n) continue;
      const from = topicAddress(log.topics[1]!);
      const to = topicAddress(log.topics[2]!);
      if (from !== ZERO_ADDRESS) add(deltas, holderKeyText(token, from), -value);
      if (to !== ZERO_ADDRESS) add(deltas, holderKeyText(token, to), value);
    }
  }
  for (const [key, amount] of deltas) if (amount === 0n) deltas.delete(key);
  return deltas;
}
