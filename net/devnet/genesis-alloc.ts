/**
 * The devnet's genesis state, which its genesis `stateRoot` commits to and its exported genesis.json lists as
 * `alloc`: each sending account starts with ETH for its fees, and each devnet contract (tokens, pools, router,
 * disperse, delegate) exists from genesis — block 1 calls them without deploying them. Their code is a stand-in:
 * the devnet has no EVM (the generator writes the logs these contracts would emit), so the code only marks them
 * as contracts. Token balances and pool reserves start at zero; block 1's setup mints them.
 */
import type { Address, GenesisAccount, Hex } from '../eth/index.js';
import { devnetAccounts } from './accounts.js';
import type { DevnetConfig } from './config.js';
import { DEVNET_CONTRACTS } from './contracts.js';

/** Each sending account's ETH at genesis, in wei (a million ether). */
export const INITIAL_ACCOUNT_ETH_BALANCE = 1_000_000n * 10n ** 18n;
/** The stand-in code of every devnet contract: INVALID (0xfe), the EVM's designated invalid instruction. */
export const DEVNET_CONTRACT_CODE: Hex = '0xfe';

const account = (balance: bigint, code: Hex): GenesisAccount => ({ balance, nonce: 0n, code, storage: new Map() });

export function devnetGenesisAlloc(config: DevnetConfig): Map<Address, GenesisAccount> {
  const alloc = new Map<Address, GenesisAccount>();
  for (const { address } of devnetAccounts(config.seed, config.accounts)) alloc.set(address, account(INITIAL_ACCOUNT_ETH_BALANCE, '0x'));
  const { tokens, pools, router, disperse, delegate } = DEVNET_CONTRACTS;
  for (const address of [...tokens, ...pools.map((pool) => pool.address), router, disperse, delegate]) alloc.set(address, account(0n, DEVNET_CONTRACT_CODE));
  return alloc;
}
