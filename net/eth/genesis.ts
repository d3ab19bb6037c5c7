/**
 * geth `genesis.json` → chain id, fork schedule (block and timestamp forks, `config.blobSchedule`), the genesis
 * header fields (all but `stateRoot`, which `genesisStateRoot` computes from the alloc) and the alloc itself.
 */
import { EMPTY_UNCLES_HASH } from './block.js';
import type { BlobScheduleEntry } from './blob-fee.js';
import { EMPTY_BLOOM } from './bloom.js';
import { GenesisFormatError } from './errors.js';
import { createForkSchedule, isForkActive, type ForkActivation, type ForkName, type ForkSchedule } from './fork-schedule.js';
import { bytesAt, fixedAt, objectAt, quantityAt, safeNumberAt, type JsonObject } from './genesis-json.js';
import type { BlockHeader } from './header.js';
import type { Address, Hash, Hex } from './hex.js';
import { EMPTY_TRIE_ROOT } from './trie-root.js';

export interface GenesisAccount {
  balance: bigint;
  nonce: bigint;
  code: Hex;
  /** 32-byte slot → 32-byte value. */
  storage: ReadonlyMap<Hash, Hash>;
}

export interface ParsedGenesis {
  chainId: bigint;
  schedule: ForkSchedule;
  /** Every genesis header field except `stateRoot`. */
  header: Omit<BlockHeader, 'stateRoot'>;
  alloc: ReadonlyMap<Address, GenesisAccount>;
  terminalTotalDifficulty?: bigint;
}

/** sha256 of no requests (EIP-7685): the `requestsHash` of a Prague genesis. */
export const EMPTY_REQUESTS_HASH: Hash = '0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const ZERO_HASH: Hash = `0x${'00'.repeat(32)}`;
const INITIAL_BASE_FEE = 1_000_000_000n;
const DEFAULT_GAS_LIMIT = 4_712_388n;
const DEFAULT_DIFFICULTY = 131_072n;

/** geth `config` keys of block-activated forks, in activation order. */
export const GENESIS_BLOCK_KEYS: readonly (readonly [string, ForkName])[] = [
  ['homesteadBlock', 'homestead'], ['daoForkBlock', 'dao'], ['eip150Block', 'tangerineWhistle'],
  ['eip155Block', 'spuriousDragon'], ['byzantiumBlock', 'byzantium'], ['constantinopleBlock', 'constantinople'],
  ['petersburgBlock', 'petersburg'], ['istanbulBlock', 'istanbul'], ['muirGlacierBlock', 'muirGlacier'],
  ['berlinBlock', 'berlin'], ['londonBlock', 'london'], ['arrowGlacierBlock', 'arrowGlacier'],
  ['grayGlacierBlock', 'grayGlacier'], ['mergeNetsplitBlock', 'paris'],
];
/** geth `config` keys of timestamp-activated forks, in activation order. */
export const GENESIS_TIME_KEYS: readonly (readonly [string, ForkName])[] = [
  ['shanghaiTime', 'shanghai'], ['cancunTime', 'cancun'], ['pragueTime', 'prague'], ['osakaTime', 'osaka'],
  ['bpo1Time', 'bpo1'], ['bpo2Time', 'bpo2'], ['bpo3Time', 'bpo3'], ['bpo4Time', 'bpo4'], ['bpo5Time', 'bpo5'],
  ['amsterdamTime', 'amsterdam'],
];
/** Blob parameters of the EIPs, used when `blobSchedule` omits a named fork (older genesis files). */
const DEFAULT_BLOB: Partial<Record<ForkName, BlobScheduleEntry>> = {
  cancun: { target: 3, max: 6, baseFeeUpdateFraction: 3_338_477n },
  prague: { target: 6, max: 9, baseFeeUpdateFraction: 5_007_716n },
  osaka: { target: 6, max: 9, baseFeeUpdateFraction: 5_007_716n },
};

function blobEntry(blobSchedule: JsonObject, name: ForkName): BlobScheduleEntry | undefined {
  const raw = blobSchedule[name];
  if (raw === undefined) {
    if (name.startsWith('bpo')) throw new GenesisFormatError(`config.blobSchedule.${name}`, `missing for scheduled fork ${name}`);
    return DEFAULT_BLOB[name];
  }
  const entry = objectAt(raw, `config.blobSchedule.${name}`);
  const key = (field: string) => `config.blobSchedule.${name}.${field}`;
  return {
    target: safeNumberAt(entry.target, key('target')),
    max: safeNumberAt(entry.max, key('max')),
    baseFeeUpdateFraction: quantityAt(entry.baseFeeUpdateFraction, key('baseFeeUpdateFraction')),
  };
}

function checkForkKeys(config: JsonObject): void {
  const known = new Set([...GENESIS_BLOCK_KEYS, ...GENESIS_TIME_KEYS].map(([key]) => key).concat('eip158Block'));
  for (const key of Object.keys(config)) {
    if ((key.endsWith('Block') || key.endsWith('Time')) && !known.has(key)) {
      throw new GenesisFormatError(`config.${key}`, 'unknown fork; its activation would change the fork id');
    }
  }
  if (config.eip158Block === undefined || config.eip158Block === null) return;
  const eip155 = config.eip155Block === undefined || config.eip155Block === null ? undefined : quantityAt(config.eip155Block, 'config.eip155Block');
  if (quantityAt(config.eip158Block, 'config.eip158Block') !== eip155) {
    throw new GenesisFormatError('config.eip158Block', 'must equal eip155Block (both are Spurious Dragon)');
  }
}

function parseSchedule(config: JsonObject, chainId: bigint): ForkSchedule {
  checkForkKeys(config);
  const blobSchedule = config.blobSchedule === undefined ? {} : objectAt(config.blobSchedule, 'config.blobSchedule');
  const forks: ForkActivation[] = [];
  for (const [key, name] of GENESIS_BLOCK_KEYS) {
    if (config[key] === undefined || config[key] === null) continue;
    forks.push({ name, block: safeNumberAt(config[key], `config.${key}`), inForkId: true });
  }
  for (const [key, name] of GENESIS_TIME_KEYS) {
    if (config[key] === undefined || config[key] === null) continue;
    const fork: ForkActivation = { name, timestamp: safeNumberAt(config[key], `config.${key}`), inForkId: true };
    const blob = blobEntry(blobSchedule, name);
    if (blob !== undefined) fork.blob = blob;
    forks.push(fork);
  }
  return createForkSchedule(chainId, forks);
}

function parseAlloc(raw: unknown): Map<Address, GenesisAccount> {
  const alloc = new Map<Address, GenesisAccount>();
  for (const [rawAddress, rawAccount] of Object.entries(objectAt(raw ?? {}, 'alloc'))) {
    const address = fixedAt(rawAddress, `alloc key ${rawAddress}`, 20);
    const account = objectAt(rawAccount, `alloc.${rawAddress}`);
    const storage = new Map<Hash, Hash>();
    for (const [slot, value] of Object.entries(objectAt(account.storage ?? {}, `alloc.${rawAddress}.storage`))) {
      storage.set(fixedAt(slot, `alloc.${rawAddress}.storage key`, 32), fixedAt(value, `alloc.${rawAddress}.storage.${slot}`, 32));
    }
    alloc.set(address, {
      balance: quantityAt(account.balance, `alloc.${rawAddress}.balance`, 0n),
      nonce: quantityAt(account.nonce, `alloc.${rawAddress}.nonce`, 0n),
      code: bytesAt(account.code, `alloc.${rawAddress}.code`),
      storage,
    });
  }
  return alloc;
}

function genesisHeader(json: JsonObject, schedule: ForkSchedule): Omit<BlockHeader, 'stateRoot'> {
  const at = { number: safeNumberAt(json.number, 'number', 0), timestamp: safeNumberAt(json.timestamp, 'timestamp', 0) };
  const active = (name: ForkName) => isForkActive(schedule, name, at);
  const mixHash = fixedAt(json.mixHash ?? json.mixhash, 'mixHash', 32, ZERO_HASH);
  const difficulty = json.difficulty === undefined && mixHash === ZERO_HASH ? DEFAULT_DIFFICULTY : quantityAt(json.difficulty, 'difficulty', 0n);
  const header: Omit<BlockHeader, 'stateRoot'> = {
    parentHash: fixedAt(json.parentHash, 'parentHash', 32, ZERO_HASH),
    sha3Uncles: EMPTY_UNCLES_HASH,
    miner: fixedAt(json.coinbase, 'coinbase', 20, `0x${'00'.repeat(20)}`),
    transactionsRoot: EMPTY_TRIE_ROOT,
    receiptsRoot: EMPTY_TRIE_ROOT,
    logsBloom: EMPTY_BLOOM,
    difficulty,
    number: at.number,
    // geth reads a zero or missing gas limit as its default.
    gasLimit: quantityAt(json.gasLimit, 'gasLimit', 0n) || DEFAULT_GAS_LIMIT,
    gasUsed: quantityAt(json.gasUsed, 'gasUsed', 0n),
    timestamp: at.timestamp,
    extraData: bytesAt(json.extraData, 'extraData'),
    mixHash,
    nonce: fixedAt(quantityAt(json.nonce, 'nonce', 0n).toString(16), 'nonce', 8),
  };
  if (active('london')) header.baseFeePerGas = quantityAt(json.baseFeePerGas, 'baseFeePerGas', INITIAL_BASE_FEE);
  if (active('shanghai')) header.withdrawalsRoot = EMPTY_TRIE_ROOT;
  if (active('cancun')) {
    header.blobGasUsed = quantityAt(json.blobGasUsed, 'blobGasUsed', 0n);
    header.excessBlobGas = quantityAt(json.excessBlobGas, 'excessBlobGas', 0n);
    header.parentBeaconBlockRoot = ZERO_HASH;
  }
  if (active('prague')) header.requestsHash = EMPTY_REQUESTS_HASH;
  return header;
}

export function parseGethGenesis(json: unknown): ParsedGenesis {
  const root = objectAt(json, 'genesis');
  const config = objectAt(root.config, 'config');
  const chainId = quantityAt(config.chainId, 'config.chainId');
  const schedule = parseSchedule(config, chainId);
  const parsed: ParsedGenesis = { chainId, schedule, header: genesisHeader(root, schedule), alloc: parseAlloc(root.alloc) };
  if (config.terminalTotalDifficulty !== undefined) {
    parsed.terminalTotalDifficulty = quantityAt(config.terminalTotalDifficulty, 'config.terminalTotalDifficulty');
  }
  return parsed;
}
