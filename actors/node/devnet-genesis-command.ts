/**
 * The CLI side of `chain-node devnet genesis --config CFG [--set …] [--out FILE]`: the chain `[devnet]` describes, as
 * a geth genesis.json — the text, and a summary (chain id, genesis hash, the forks' activation times) to compare with
 * the devnet node's block 0. A node that follows that devnet node over JSON-RPC names the file as
 * `sources.live.genesis_file`.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { devnetForkSchedule, devnetGenesis, devnetGenesisJson, resolveDevnetConfig } from '../../net/devnet/index.js';
import type { Hash } from '../../net/eth/hex.js';
import { devnetInput } from './chain-spec.js';
import type { LoadedConfig } from './config.js';

export interface DevnetGenesisExport {
  /** The genesis.json, 2-space indented, newline-terminated. */
  readonly text: string;
  readonly summary: {
    readonly chainId: number;
    readonly genesisHash: Hash;
    /** Each time-activated fork's activation timestamp (the block forks are all at block 0). */
    readonly forkTimes: Readonly<Record<string, number>>;
  };
}

export function exportDevnetGenesis(loaded: LoadedConfig): DevnetGenesisExport {
  const devnet = resolveDevnetConfig(devnetInput(loaded.config));
  const forkTimes = Object.fromEntries(devnetForkSchedule(devnet).forks.flatMap((fork) => (fork.timestamp === undefined ? [] : [[fork.name, fork.timestamp]])));
  return {
    text: `${JSON.stringify(devnetGenesisJson(devnet), null, 2)}\n`,
    summary: { chainId: devnet.chainId, genesisHash: devnetGenesis(devnet).hash, forkTimes },
  };
}

/** Writes `text` to `path` (relative to the working directory) and returns the absolute path; failure names `--out`. */
export function writeGenesisFile(path: string, text: string): string {
  const absolute = resolve(path);
  try {
    writeFileSync(absolute, text);
  } catch (error) {
    throw new Error(`--out ${JSON.stringify(path)}: expected a writable file path (${(error as Error).message})`);
  }
  return absolute;
}
