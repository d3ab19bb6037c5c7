/** Readers for the shared fixtures the `net/eth` tests use (read-only; never copied or edited). */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hexToBytes } from '../../../net/eth/hex.js';
import { FIXTURES } from '../../support/paths.js';

export function readJson(relativePath: string): unknown {
  return JSON.parse(readFileSync(join(FIXTURES, relativePath), 'utf8'));
}

export function readBytes(relativePath: string): Uint8Array {
  return new Uint8Array(readFileSync(join(FIXTURES, relativePath)));
}

export interface MainnetBlockFixture {
  file: string;
  /** The block number the file name states. */
  number: number;
  header: Uint8Array;
  body: Uint8Array;
  receipts: Uint8Array;
}

/** Every `mainnet-blocks/block-data-<number>.yaml` (three `key: 0x…` lines), in block-number order. */
export function mainnetBlocks(): MainnetBlockFixture[] {
  const dir = join(FIXTURES, 'mainnet-blocks');
  return readdirSync(dir)
    .filter((file) => /^block-data-\d+\.yaml$/.test(file))
    .map((file) => {
      const fields = new Map<string, string>();
      for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
        const match = /^(\w+):\s*(0x[0-9a-fA-F]*)\s*$/.exec(line);
        if (match) fields.set(match[1]!, match[2]!);
      }
      const field = (name: string) => {
        const value = fields.get(name);
        if (value === undefined) throw new Error(`${file} has no ${name}`);
        return hexToBytes(value);
      };
      return {
        file,
        number: Number(/(\d+)/.exec(file)![1]),
        header: field('header'),
        body: field('body'),
        receipts: field('receipts'),
      };
    })
    .sort((a, b) => a.number - b.number);
}
