/**
 * The devnet genesis block. Its `stateRoot` is the state root of the devnet's genesis alloc (`genesis-alloc.ts`), as
 * geth would build it from the exported genesis.json. After genesis the devnet keeps no state trie: each block's
 * `stateRoot` is a keccak chain that starts at the genesis root and absorbs the block's roots (see `nextStateRoot`).
 */
import {
  concatBytes,
  EMPTY_BLOOM,
  EMPTY_REQUESTS_HASH,
  EMPTY_TRIE_ROOT,
  EMPTY_UNCLES_HASH,
  genesisStateRoot,
  hashHeader,
  hexToBytes,
  isForkActive,
  keccak256Hex,
  type BlockHeader,
  type GenesisBlock,
  type Hash,
} from '../eth/index.js';
import type { DevnetConfig } from './config.js';
import { devnetForkSchedule } from './fork-schedule.js';
import { devnetGenesisAlloc } from './genesis-alloc.js';
import { DEVNET_EXTRA_DATA, INITIAL_BASE_FEE, ZERO_ADDRESS, ZERO_HASH, ZERO_NONCE } from './header-fields.js';

/** A block's `stateRoot`: keccak256(parent stateRoot ‖ transactionsRoot ‖ receiptsRoot ‖ withdrawalsRoot). */
export function nextStateRoot(parentStateRoot: Hash, transactionsRoot: Hash, receiptsRoot: Hash, withdrawalsRoot: Hash): Hash {
  return keccak256Hex(concatBytes(...[parentStateRoot, transactionsRoot, receiptsRoot, withdrawalsRoot].map((hash) => hexToBytes(hash))));
}

export function devnetGenesis(config: DevnetConfig): GenesisBlock {
  const schedule = devnetForkSchedule(config);
  const at = { number: 0, timestamp: config.genesisTimestamp };
  const header: BlockHeader = {
    parentHash: ZERO_HASH,
    sha3Uncles: EMPTY_UNCLES_HASH,
    miner: ZERO_ADDRESS,
    stateRoot: genesisStateRoot(devnetGenesisAlloc(config)),
    transactionsRoot: EMPTY_TRIE_ROOT,
    receiptsRoot: EMPTY_TRIE_ROOT,
    logsBloom: EMPTY_BLOOM,
    difficulty: 0n,
    number: 0,
    gasLimit: config.gasLimit,
    gasUsed: 0n,
    timestamp: config.genesisTimestamp,
    extraData: DEVNET_EXTRA_DATA,
    mixHash: ZERO_HASH,
    nonce: ZERO_NONCE,
    baseFeePerGas: INITIAL_BASE_FEE,
    withdrawalsRoot: EMPTY_TRIE_ROOT,
  };
  if (isForkActive(schedule, 'cancun', at)) {
    header.blobGasUsed = 0n;
    header.excessBlobGas = 0n;
    header.parentBeaconBlockRoot = ZERO_HASH;
  }
  if (isForkActive(schedule, 'prague', at)) header.requestsHash = EMPTY_REQUESTS_HASH;
  return { header, hash: hashHeader(header) };
}
