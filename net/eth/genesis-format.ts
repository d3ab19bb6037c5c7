/**
 * A genesis block and its fork schedule → geth `genesis.json` (the inverse of `parseGethGenesis`): `config` with the
 * chain id, every fork's block or time key, `terminalTotalDifficulty` and `blobSchedule`; the header fields geth
 * reads; and the alloc. The result is checked by parsing it back: a genesis the format cannot express (a header
 * field geth derives differently, a fork activated by total difficulty) is an error, never a file for another chain.
 */
import { isDeepStrictEqual } from 'node:util';
import { GenesisFormatError } from './errors.js';
import type { ForkActivation, ForkSchedule } from './fork-schedule.js';
import { GENESIS_BLOCK_KEYS, GENESIS_TIME_KEYS, parseGethGenesis, type GenesisAccount } from './genesis.js';
import { buildGenesisBlock } from './genesis-state.js';
import type { JsonObject } from './genesis-json.js';
import { hashHeader, type BlockHeader } from './header.js';
import type { Address } from './hex.js';

export interface GethGenesisSource {
  readonly schedule: ForkSchedule;
  /** The complete genesis header, `stateRoot` included (it must be the alloc's state root). */
  readonly header: BlockHeader;
  readonly alloc: ReadonlyMap<Address, GenesisAccount>;
  /** 0 for a chain merged at genesis; absent for a proof-of-work chain. */
  readonly terminalTotalDifficulty?: bigint;
}

const hexQuantity = (value: bigint | number): string => `0x${value.toString(16)}`;

function safeNumber(value: bigint, key: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new GenesisFormatError(key, `${value} exceeds Number.MAX_SAFE_INTEGER`);
  return Number(value);
}

function forkKey(fork: ForkActivation): string {
  const keys = fork.block !== undefined ? GENESIS_BLOCK_KEYS : GENESIS_TIME_KEYS;
  const key = keys.find(([, name]) => name === fork.name)?.[0];
  if (key === undefined || !fork.inForkId) throw new GenesisFormatError(fork.name, 'no geth genesis.json key activates this fork this way');
  return key;
}

function formatConfig(source: GethGenesisSource): JsonObject {
  const config: Record<string, unknown> = { chainId: safeNumber(source.schedule.chainId, 'config.chainId') };
  const blobSchedule: Record<string, unknown> = {};
  for (const fork of source.schedule.forks) {
    const key = forkKey(fork);
    config[key] = fork.block ?? fork.timestamp;
    if (fork.name === 'dao') config.daoForkSupport = true;
    if (fork.name === 'spuriousDragon') config.eip158Block = fork.block;
    if (fork.blob !== undefined) {
      const { target, max, baseFeeUpdateFraction } = fork.blob;
      blobSchedule[fork.name] = { target, max, baseFeeUpdateFraction: safeNumber(baseFeeUpdateFraction, `config.blobSchedule.${fork.name}`) };
    }
  }
  if (source.terminalTotalDifficulty !== undefined) config.terminalTotalDifficulty = safeNumber(source.terminalTotalDifficulty, 'config.terminalTotalDifficulty');
  if (Object.keys(blobSchedule).length > 0) config.blobSchedule = blobSchedule;
  return config;
}

function formatAccount(account: GenesisAccount): JsonObject {
  const json: Record<string, unknown> = { balance: hexQuantity(account.balance) };
  if (account.nonce !== 0n) json.nonce = hexQuantity(account.nonce);
  if (account.code !== '0x') json.code = account.code;
  if (account.storage.size > 0) json.storage = Object.fromEntries([...account.storage].sort(([a], [b]) => (a < b ? -1 : 1)));
  return json;
}

function formatAlloc(alloc: ReadonlyMap<Address, GenesisAccount>): JsonObject {
  return Object.fromEntries([...alloc].sort(([a], [b]) => (a < b ? -1 : 1)).map(([address, account]) => [address, formatAccount(account)]));
}

/** The header fields a genesis.json carries (geth's names); the rest geth derives. */
function formatHeader(header: BlockHeader): JsonObject {
  const json: Record<string, unknown> = {
    nonce: header.nonce, timestamp: hexQuantity(header.timestamp), extraData: header.extraData, gasLimit: hexQuantity(header.gasLimit),
    difficulty: hexQuantity(header.difficulty), mixHash: header.mixHash, coinbase: header.miner,
    number: hexQuantity(header.number), gasUsed: hexQuantity(header.gasUsed), parentHash: header.parentHash,
  };
  if (header.baseFeePerGas !== undefined) json.baseFeePerGas = hexQuantity(header.baseFeePerGas);
  if (header.excessBlobGas !== undefined) json.excessBlobGas = hexQuantity(header.excessBlobGas);
  if (header.blobGasUsed !== undefined) json.blobGasUsed = hexQuantity(header.blobGasUsed);
  return json;
}

/** The first header field that differs, for the error when the file would build another genesis. */
function firstDifference(expected: BlockHeader, built: BlockHeader): string {
  const fields = new Set([...Object.keys(expected), ...Object.keys(built)] as (keyof BlockHeader)[]);
  const differing = [...fields].find((field) => String(expected[field]) !== String(built[field]));
  return differing === undefined ? 'the header hash' : `${differing}: ${String(built[differing])} instead of ${String(expected[differing])}`;
}

export function formatGethGenesis(source: GethGenesisSource): JsonObject {
  const json: JsonObject = { config: formatConfig(source), ...formatHeader(source.header), alloc: formatAlloc(source.alloc) };
  const parsed = parseGethGenesis(json);
  if (!isDeepStrictEqual(parsed.schedule, source.schedule)) throw new GenesisFormatError('config', 'the written fork keys read back as another schedule');
  const built = buildGenesisBlock(parsed);
  if (built.hash !== hashHeader(source.header)) throw new GenesisFormatError('genesis', `the file would build another genesis block (${firstDifference(source.header, built.header)})`);
  return json;
}
