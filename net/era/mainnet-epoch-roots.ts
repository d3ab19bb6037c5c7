/**
 * Mainnet's 1,897 pre-merge epoch accumulator roots, shipped with the node in `mainnet-epoch-roots.txt` beside
 * this file (its header names the origin: the Portal network's frozen accumulator, checked against EIP-7643's
 * root). An Era1 file of epoch N is mainnet's only when the root recomputed from its blocks is entry N.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The data file in the source tree (from dist/net/era/ or a bundle, three levels up is the project root). */
export const MAINNET_EPOCH_ROOTS_PATH = fileURLToPath(new URL('../../../net/era/mainnet-epoch-roots.txt', import.meta.url));

/** Blocks before the merge: 0 to 15,537,393 (the last proof-of-work block). */
export const MAINNET_LAST_PRE_MERGE_BLOCK = 15_537_393;

let roots: readonly string[] | null = null;

/** The roots as 0x-hex, epoch 0 first (read once). */
export function mainnetEpochRoots(): readonly string[] {
  roots ??= parseEpochRoots(readFileSync(MAINNET_EPOCH_ROOTS_PATH, 'utf8'));
  return roots;
}

/** The lines of the data file that are roots (`#` lines are comments). */
export function parseEpochRoots(text: string): string[] {
  const parsed: string[] = [];
  for (const line of text.split('\n')) {
    const value = line.trim();
    if (value === '' || value.startsWith('#')) continue;
    if (!/^0x[0-9a-f]{64}$/.test(value)) throw new Error(`${MAINNET_EPOCH_ROOTS_PATH}: "${value.slice(0, 80)}" is not a 32-byte root as 0x-hex`);
    parsed.push(value);
  }
  return parsed;
}
