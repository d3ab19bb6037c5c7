/**
 * The devnet's chain spec as a geth genesis.json: chain id, every fork (block forks and the merge at block 0,
 * Shanghai at genesis, then Cancun, Prague, Osaka and BPO1 at their configured times, with their blob schedule),
 * the genesis header fields and the genesis alloc. Parsing it gives the devnet's genesis hash and fork ids, so a
 * node that follows a devnet node over JSON-RPC (or imports its chain) names it with `sources.live.genesis_file`.
 */
import { formatGethGenesis } from '../eth/index.js';
import type { JsonObject } from '../eth/genesis-json.js';
import type { DevnetConfig } from './config.js';
import { devnetForkSchedule } from './fork-schedule.js';
import { devnetGenesis } from './genesis.js';
import { devnetGenesisAlloc } from './genesis-alloc.js';

export function devnetGenesisJson(config: DevnetConfig): JsonObject {
  return formatGethGenesis({
    schedule: devnetForkSchedule(config),
    header: devnetGenesis(config).header,
    alloc: devnetGenesisAlloc(config),
    // Proof of stake from block 0, as every devnet block is.
    terminalTotalDifficulty: 0n,
  });
}
