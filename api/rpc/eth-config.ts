/**
 * `eth_config` (EIP-7910): the fork configuration in force at the head (`current`), the next
 * scheduled one (`next`) and the last scheduled one (`last`), each with its activation time, blob
 * schedule, chain id, EIP-2124 fork id, precompiles and system contracts — from the node's checked
 * fork schedule. Fields and map keys are written in the order execution clients write them.
 */
import { forkId, type ForkIdGenesis } from '../../net/eth/fork-id.js';
import { blobParamsAt, isForkActive, type ForkActivation, type ForkName, type ForkSchedule } from '../../net/eth/fork-schedule.js';
import type { Address } from '../../net/eth/hex.js';
import { hexString, object, quantity } from './json-text.js';

export interface EthConfigChain {
  readonly schedule: ForkSchedule;
  readonly genesis: ForkIdGenesis;
  /** EIP-6110's deposit contract (mainnet's; the zero address on chains whose genesis names none). */
  readonly depositContractAddress: Address;
}

export const MAINNET_DEPOSIT_CONTRACT: Address = '0x00000000219ab540356cbb839cbe05303d7705fa';
export const ZERO_ADDRESS: Address = '0x0000000000000000000000000000000000000000';

const address = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`;

/** Precompiles by the fork that introduced them (names as EIP-7910 lists them). */
const PRECOMPILES: ReadonlyArray<readonly [ForkName, string, Address]> = [
  ['frontier', 'ECREC', address(1)], ['frontier', 'SHA256', address(2)], ['frontier', 'RIPEMD160', address(3)], ['frontier', 'ID', address(4)],
  ['byzantium', 'MODEXP', address(5)], ['byzantium', 'BN254_ADD', address(6)], ['byzantium', 'BN254_MUL', address(7)], ['byzantium', 'BN254_PAIRING', address(8)],
  ['istanbul', 'BLAKE2F', address(9)],
  ['cancun', 'KZG_POINT_EVALUATION', address(0xa)],
  ['prague', 'BLS12_G1ADD', address(0xb)], ['prague', 'BLS12_G1MSM', address(0xc)], ['prague', 'BLS12_G2ADD', address(0xd)], ['prague', 'BLS12_G2MSM', address(0xe)],
  ['prague', 'BLS12_PAIRING_CHECK', address(0xf)], ['prague', 'BLS12_MAP_FP_TO_G1', address(0x10)], ['prague', 'BLS12_MAP_FP2_TO_G2', address(0x11)],
  ['osaka', 'P256VERIFY', address(0x100)],
];

const SYSTEM_CONTRACTS: ReadonlyArray<readonly [ForkName, string, Address | 'deposit']> = [
  ['cancun', 'BEACON_ROOTS_ADDRESS', '0x000f3df6d732807ef1319fb7b8bb8522d0beac02'],
  ['prague', 'CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS', '0x0000bbddc7ce488642fb579f8b00f3a590007251'],
  ['prague', 'DEPOSIT_CONTRACT_ADDRESS', 'deposit'],
  ['prague', 'HISTORY_STORAGE_ADDRESS', '0x0000f90827f1c53a10cb7a02335b175320002935'],
  ['prague', 'WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS', '0x00000961ef480eb55e80d19ad83579a64c007002'],
];

const byName = ([, a]: readonly [unknown, string, unknown], [, b]: readonly [unknown, string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);

/** Timestamp forks from Cancun on (the forks EIP-7910 describes); of several at one time, the last one. */
function configForks(schedule: ForkSchedule): ForkActivation[] {
  const forks: ForkActivation[] = [];
  for (const fork of schedule.forks) {
    if (fork.timestamp === undefined || !isForkActive(schedule, 'cancun', { number: Number.MAX_SAFE_INTEGER, timestamp: fork.timestamp })) continue;
    if (forks.length > 0 && forks[forks.length - 1]!.timestamp === fork.timestamp) forks.pop();
    forks.push(fork);
  }
  return forks;
}

function renderForkConfig(chain: EthConfigChain, fork: ForkActivation): string {
  const at = { number: Number.MAX_SAFE_INTEGER, timestamp: fork.timestamp! };
  const active = (name: ForkName) => name === 'frontier' || isForkActive(chain.schedule, name, at);
  const blob = blobParamsAt(chain.schedule, at);
  const precompiles = PRECOMPILES.filter(([since]) => active(since)).slice().sort(byName);
  const contracts = SYSTEM_CONTRACTS.filter(([since]) => active(since)).slice().sort(byName);
  return object([
    ['activationTime', String(fork.timestamp)],
    ['blobSchedule', blob ? object([['target', String(blob.target)], ['max', String(blob.max)], ['baseFeeUpdateFraction', blob.baseFeeUpdateFraction.toString()]]) : 'null'],
    ['chainId', quantity(chain.schedule.chainId)],
    ['forkId', hexString(forkId(chain.schedule, chain.genesis, at).hash)],
    ['precompiles', object(precompiles.map(([, name, addr]) => [name, hexString(addr)]))],
    ['systemContracts', object(contracts.map(([, name, addr]) => [name, hexString(addr === 'deposit' ? chain.depositContractAddress : addr)]))],
  ]);
}

/** The `eth_config` result for a head at `headTimestamp`; undefined before Cancun (EIP-7910 starts there). */
export function renderEthConfig(chain: EthConfigChain, headTimestamp: number): string | undefined {
  const forks = configForks(chain.schedule);
  let currentIndex = -1;
  forks.forEach((fork, index) => { if (fork.timestamp! <= headTimestamp) currentIndex = index; });
  if (currentIndex < 0) return undefined;
  const next = forks[currentIndex + 1];
  const last = forks.length - 1 > currentIndex ? forks[forks.length - 1] : undefined;
  return object([
    ['current', renderForkConfig(chain, forks[currentIndex]!)],
    ['next', next ? renderForkConfig(chain, next) : 'null'],
    ['last', last ? renderForkConfig(chain, last) : 'null'],
  ]);
}
