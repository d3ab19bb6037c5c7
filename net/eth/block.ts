/**
 * Blocks and block bodies. A body is `[transactions, uncles, withdrawals?]` (eth `BlockBodies`, the mainnet
 * fixtures); a block is `[header, transactions, uncles, withdrawals?]` (chain files, eth `NewBlock`). In both, a
 * legacy transaction is an RLP list and a typed one a byte string holding its canonical encoding.
 */
import { RlpDecodeError } from './errors.js';
import { headerFromRlp, headerToRlp, type BlockHeader } from './header.js';
import type { Hash } from './hex.js';
import { keccak256Hex } from './keccak.js';
import { decodeRlpList, encodeRlp, type RlpInput, type RlpItem, type RlpList } from './rlp.js';
import { transactionFromBodyItem } from './transaction-decode.js';
import { transactionToBodyItem } from './transaction-encode.js';
import type { Transaction } from './transaction-types.js';
import { withdrawalFromRlp, withdrawalToRlp, type Withdrawal } from './withdrawal.js';

export interface BlockBody {
  transactions: Transaction[];
  uncles: BlockHeader[];
  /** Present from Shanghai on (possibly empty); absent before. */
  withdrawals?: Withdrawal[];
}

export interface Block extends BlockBody {
  header: BlockHeader;
}

/** keccak256(rlp([])): the `sha3Uncles` of every block without uncles, so of every post-merge block. */
export const EMPTY_UNCLES_HASH: Hash = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';

function listAt(list: RlpList, index: number, subject: string, field: string): RlpList {
  const item = list[index];
  if (!Array.isArray(item)) throw new RlpDecodeError(subject, `field ${field}: expected a list`);
  return item;
}

/** Builds a body from the decoded items `[transactions, uncles, withdrawals?]`. */
export function bodyFromRlpItems(items: readonly RlpItem[], subject = 'block body'): BlockBody {
  const list = items as RlpList;
  const body: BlockBody = {
    transactions: listAt(list, 0, subject, 'transactions').map(transactionFromBodyItem),
    uncles: listAt(list, 1, subject, 'uncles').map(headerFromRlp),
  };
  if (list.length >= 3) body.withdrawals = listAt(list, 2, subject, 'withdrawals').map(withdrawalFromRlp);
  return body;
}

export function decodeBlockBody(bytes: Uint8Array): BlockBody {
  return bodyFromRlpItems(decodeRlpList(bytes, 'block body', [2, 3]));
}

export function blockFromRlp(item: RlpItem): Block {
  if (!Array.isArray(item) || (item.length !== 3 && item.length !== 4)) {
    throw new RlpDecodeError('block', 'expected [header, transactions, uncles, withdrawals?]');
  }
  return { header: headerFromRlp(item[0]!), ...bodyFromRlpItems(item.slice(1), 'block') };
}

export function decodeBlock(bytes: Uint8Array): Block {
  return blockFromRlp(decodeRlpList(bytes, 'block'));
}

function bodyToRlpItems(body: BlockBody): RlpInput[] {
  const items: RlpInput[] = [body.transactions.map(transactionToBodyItem), body.uncles.map(headerToRlp)];
  if (body.withdrawals !== undefined) items.push(body.withdrawals.map(withdrawalToRlp));
  return items;
}

export function encodeBlockBody(body: BlockBody): Uint8Array {
  return encodeRlp(bodyToRlpItems(body));
}

export function encodeBlock(block: Block): Uint8Array {
  return encodeRlp([headerToRlp(block.header), ...bodyToRlpItems(block)]);
}

/** The header's `sha3Uncles` for a list of uncle headers. */
export function unclesHash(uncles: readonly BlockHeader[]): Hash {
  return uncles.length === 0 ? EMPTY_UNCLES_HASH : keccak256Hex(encodeRlp(uncles.map(headerToRlp)));
}
