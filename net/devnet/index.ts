/** `net/devnet`: the deterministic local chain the node runs against by default (ARCHITECTURE §7). */
export { AUTHORITY_COUNT, devnetAccounts, devnetAuthorities, devnetFeeRecipients, type DevnetAccount } from './accounts.js';
export { amountOut } from './amm.js';
export { nextBaseFee } from './base-fee.js';
export {
  blockTimestamp,
  DEFAULT_DEVNET_CONFIG,
  resolveDevnetConfig,
  secondsPerBlock,
  type DevnetConfig,
  type DevnetConfigInput,
  type DevnetForkOffsets,
} from './config.js';
export { DEVNET_CONTRACTS, INITIAL_ACCOUNT_TOKEN_BALANCE, type DevnetContracts, type DevnetPool } from './contracts.js';
export { createDevnet, resumeDepth, type Devnet, type DevnetResume, type DevnetResumeBlock } from './devnet.js';
export { DevnetConfigError } from './errors.js';
export { SWAP_TOPIC, SYNC_TOPIC, TRANSFER_TOPIC } from './events.js';
export { devnetForkSchedule } from './fork-schedule.js';
export { devnetSteps, generateChain } from './generate-chain.js';
export { devnetGenesis, nextStateRoot } from './genesis.js';
export { DEVNET_CONTRACT_CODE, devnetGenesisAlloc, INITIAL_ACCOUNT_ETH_BALANCE } from './genesis-alloc.js';
export { devnetGenesisJson } from './genesis-json.js';
export { DEVNET_EXTRA_DATA } from './header-fields.js';
export { Prng, randomStream } from './prng.js';
export type { DevnetBlock, DevnetReorg, DevnetStep } from './types.js';
