/**
 * The optional receipts input of `chain-node import --receipts FILE`: JSON-RPC `eth_getBlockReceipts` results,
 * either an object keyed by block (block hash, or block number as decimal or 0x-quantity) or an array of non-empty
 * results (each names its block by the receipts' `blockHash`). Nothing here is trusted: `matchReceipts` checks
 * every receipt's block and transaction identity against the block from the chain file, and the import then
 * verifies the set against the header's `receiptsRoot`, `logsBloom` and `gasUsed` before storing it.
 */
import { readFileSync } from 'node:fs';
import type { Block } from '../../net/eth/block.js';
import type { Hash } from '../../net/eth/hex.js';
import type { Receipt } from '../../net/eth/receipt.js';
import { hashTransaction } from '../../net/eth/transaction-encode.js';
import { UpstreamFormatError } from '../../net/rpc/errors.js';
import { JsonFields } from '../../net/rpc/json-fields.js';
import { receiptFromJson } from '../../net/rpc/receipt-json.js';
import { ReceiptsFileError } from './errors.js';

/** Receipts JSON by block: `byHash` keys are lower-case 0x block hashes, `byNumber` keys block numbers. */
export interface ReceiptsInput {
  readonly byHash: ReadonlyMap<string, readonly unknown[]>;
  readonly byNumber: ReadonlyMap<number, readonly unknown[]>;
  /** Every block key the file named, to report the ones no imported block used. */
  readonly size: number;
}

const BLOCK_HASH = /^0x[0-9a-fA-F]{64}$/;
const DECIMAL = /^[0-9]+$/;
const QUANTITY = /^0x[0-9a-fA-F]+$/;

export function readReceiptsFile(path: string): ReceiptsInput {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ReceiptsFileError(`receipts file ${path}: ${(error as Error).message}`);
  }
  return parseReceiptsInput(json, path);
}

export function parseReceiptsInput(json: unknown, source = 'receipts input'): ReceiptsInput {
  const byHash = new Map<string, readonly unknown[]>();
  const byNumber = new Map<number, readonly unknown[]>();
  const add = (key: string, receipts: unknown, where: string) => {
    if (!Array.isArray(receipts)) throw new ReceiptsFileError(`${source}: ${where} is not an array of receipts (an eth_getBlockReceipts result)`);
    if (BLOCK_HASH.test(key)) {
      if (byHash.has(key.toLowerCase())) throw new ReceiptsFileError(`${source}: block ${key} appears twice`);
      byHash.set(key.toLowerCase(), receipts);
      return;
    }
    const number = DECIMAL.test(key) || QUANTITY.test(key) ? Number(BigInt(key)) : NaN;
    if (!Number.isSafeInteger(number)) throw new ReceiptsFileError(`${source}: key ${JSON.stringify(key)} is neither a block hash nor a block number`);
    if (byNumber.has(number)) throw new ReceiptsFileError(`${source}: block ${number} appears twice`);
    byNumber.set(number, receipts);
  };
  if (Array.isArray(json)) {
    json.forEach((receipts, index) => {
      const first: unknown = Array.isArray(receipts) ? receipts[0] : undefined;
      const hash = typeof first === 'object' && first !== null ? (first as { blockHash?: unknown }).blockHash : undefined;
      if (typeof hash !== 'string') throw new ReceiptsFileError(`${source}: entry ${index} must be a non-empty eth_getBlockReceipts result whose receipts name their blockHash`);
      add(hash, receipts, `entry ${index}`);
    });
  } else if (typeof json === 'object' && json !== null) {
    for (const [key, receipts] of Object.entries(json)) add(key, receipts, `the value of ${JSON.stringify(key)}`);
  } else {
    throw new ReceiptsFileError(`${source}: expected an object keyed by block hash or number, or an array of eth_getBlockReceipts results`);
  }
  return { byHash, byNumber, size: byHash.size + byNumber.size };
}

/** The receipts JSON the input holds for this block, or undefined. */
export function receiptsJsonFor(input: ReceiptsInput, number: number, hash: Hash): readonly unknown[] | undefined {
  const byHash = input.byHash.get(hash.toLowerCase());
  const byNumber = input.byNumber.get(number);
  if (byHash && byNumber) throw new ReceiptsFileError(`receipts for block ${number} (${hash}) are given both by hash and by number`);
  return byHash ?? byNumber;
}

/**
 * Decodes the receipts JSON of one block and checks that each receipt belongs to it: the receipt count, and where
 * the JSON names them, `blockHash`, `blockNumber`, `transactionHash` and `transactionIndex`. The consensus
 * contents (status, gas, logs) are checked by the receipts root afterwards.
 */
export function matchReceipts(block: Block, hash: Hash, json: readonly unknown[]): Receipt[] {
  const subject = `receipts of block ${block.header.number} (${hash})`;
  if (json.length !== block.transactions.length) {
    throw new ReceiptsFileError(`${subject}: ${json.length} receipts for ${block.transactions.length} transactions`);
  }
  return json.map((item, index) => {
    try {
      const fields = new JsonFields(item, `receipt ${index}`);
      const expect = (name: string, expected: string, actual: () => string) => {
        if (fields.has(name) && actual() !== expected) throw new ReceiptsFileError(`${subject}: receipt ${index} has ${name} ${actual()}, expected ${expected}`);
      };
      expect('blockHash', hash, () => fields.fixed('blockHash', 32));
      expect('blockNumber', String(block.header.number), () => String(fields.number('blockNumber')));
      expect('transactionHash', hashTransaction(block.transactions[index]!), () => fields.fixed('transactionHash', 32));
      expect('transactionIndex', String(index), () => String(fields.number('transactionIndex')));
      return receiptFromJson(item, index);
    } catch (error) {
      if (error instanceof UpstreamFormatError) throw new ReceiptsFileError(`${subject}: ${error.message}`);
      throw error;
    }
  });
}
