/**
 * The CLI side of `chain-node import FILE --config CFG [--genesis G] [--receipts R] [--no-finalize]`: resolves the
 * genesis file (`--genesis`, relative to the working directory, else `sources.live.genesis_file`, relative to the
 * config file), reads the receipts input, and runs the import into the configured data directory.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, type LoadedConfig } from '../node/config.js';
import { readGenesisFile } from '../node/chain-spec.js';
import { importChain, type ImportResult } from './chain-import.js';
import { ImportError } from './errors.js';
import { readReceiptsFile } from './receipts-file.js';

export interface ImportCommandOptions {
  readonly chainFile: string;
  readonly genesisFile: string | null;
  readonly receiptsFile: string | null;
  readonly finalize: boolean;
  /** One human-readable line per committed batch. */
  readonly progress?: (line: string) => void;
}

export async function runImport(loaded: LoadedConfig, options: ImportCommandOptions): Promise<ImportResult> {
  const configured = loaded.config.sources.live.genesis_file;
  if (options.genesisFile === null && configured === '') {
    throw new ConfigError([{ key: 'sources.live.genesis_file', value: '""', expected: 'the chain\'s geth genesis.json, or pass --genesis FILE' }]);
  }
  const genesisPath = options.genesisFile !== null ? resolve(options.genesisFile) : resolve(loaded.configDir, configured);
  const genesis = readGenesisFile(genesisPath, options.genesisFile !== null ? '--genesis' : 'sources.live.genesis_file');
  const chainFile = resolve(options.chainFile);
  if (!existsSync(chainFile)) throw new ImportError(`chain file ${chainFile} does not exist`);
  const receipts = options.receiptsFile === null ? null : readReceiptsFile(resolve(options.receiptsFile));
  return importChain({
    dataDir: loaded.dataDir,
    chainFile,
    genesis,
    receipts,
    finalize: options.finalize,
    onProgress: options.progress
      ? ({ committed, total, head }) => options.progress!(`import: ${committed}/${total} blocks written, head ${head.number} ${head.hash}`)
      : undefined,
  });
}
