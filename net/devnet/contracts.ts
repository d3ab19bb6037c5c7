/**
 * The devnet's contracts: ERC-20 tokens, Uniswap-V2-shaped pools, a router, a disperse (batch transfer) contract,
 * an EIP-7702 delegate and rollup inboxes. Their addresses do not depend on the seed, so a processor config can name
 * them once for every devnet. There is no EVM: the generator writes the logs these contracts would emit.
 */
import { bytesToHex, keccak256, type Address } from '../eth/index.js';

export interface DevnetPool {
  address: Address;
  /** The lower token address, as Uniswap V2 orders a pair. */
  token0: Address;
  token1: Address;
  /** Reserves set by block 1's setup (the first `Sync` of the pool), in token base units. */
  initialReserve0: bigint;
  initialReserve1: bigint;
}

export interface DevnetContracts {
  tokens: readonly Address[];
  pools: readonly DevnetPool[];
  /** Swaps go through it, so it is the `sender` of every `Swap` event. */
  router: Address;
  /** Batch token transfers (`disperseToken`), the transactions that fill blocks towards their gas target. */
  disperse: Address;
  /** Code that EIP-7702 authorizations delegate to. */
  delegate: Address;
  /** Receivers of blob transactions. */
  rollupInboxes: readonly Address[];
}

const TOKEN_COUNT = 3;
const ONE_TOKEN = 10n ** 18n;
/** Each account's balance of each token after block 1's setup. */
export const INITIAL_ACCOUNT_TOKEN_BALANCE = 1_000_000n * ONE_TOKEN;
const POOL_PAIRS = [[0, 1], [0, 2], [1, 2]] as const;

export function contractAddress(label: string): Address {
  return bytesToHex(keccak256(new TextEncoder().encode(`cdn-devnet/${label}`)).subarray(12));
}

function pool(index: number, tokens: readonly Address[]): DevnetPool {
  const [a, b] = POOL_PAIRS[index]!;
  const [token0, token1] = [tokens[a]!, tokens[b]!].sort();
  return {
    address: contractAddress(`pool/${index}`),
    token0: token0!,
    token1: token1!,
    initialReserve0: BigInt(index + 1) * 2_000_000n * ONE_TOKEN,
    initialReserve1: BigInt(index + 2) * 750_000n * ONE_TOKEN,
  };
}

function buildContracts(): DevnetContracts {
  const tokens = Array.from({ length: TOKEN_COUNT }, (_, i) => contractAddress(`token/${i}`));
  return Object.freeze({
    tokens: Object.freeze(tokens),
    pools: Object.freeze(POOL_PAIRS.map((_, i) => Object.freeze(pool(i, tokens)))),
    router: contractAddress('router'),
    disperse: contractAddress('disperse'),
    delegate: contractAddress('delegate'),
    rollupInboxes: Object.freeze([contractAddress('rollup-inbox/0'), contractAddress('rollup-inbox/1')]),
  });
}

export const DEVNET_CONTRACTS: DevnetContracts = buildContracts();
