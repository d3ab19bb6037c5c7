/**
 * Upstream JSON → verified block material. `materialFromJson` converts a full block (`eth_getBlockByNumber|Hash`
 * with full transactions) and its `eth_getBlockReceipts`, verifies them against the header with `verifyBlock`
 * (block hash, transactions root, withdrawals root, blob gas, receipts root, bloom, gas used) and re-encodes them
 * as the chain tables store them. Nothing unverified leaves this module: a mismatch throws `BlockVerificationError`
 * naming the field, malformed JSON throws `UpstreamFormatError`.
 */
import { encodeBlockBody } from '../eth/block.js';
import { BlockVerificationError } from '../eth/errors.js';
import { encodeHeader, type BlockHeader } from '../eth/header.js';
import { bytesToHex, hexToBytes, type Hash } from '../eth/hex.js';
import { encodeEth69Receipts, type Receipt } from '../eth/receipt.js';
import type { Transaction } from '../eth/transaction-types.js';
import { transactionsRoot } from '../eth/trie-root.js';
import { verifyBlock, type VerifyBlockParameters } from '../eth/verify-block.js';
import { verifyBlockMaterialBytes } from '../eth/verify-material.js';
import type { Withdrawal } from '../eth/withdrawal.js';
import type { BlockMaterial } from '../../store/chain-material.js';
import { PooledBlobRootError, UpstreamFormatError } from './errors.js';
import { headerFromJson } from './header-json.js';
import { JsonFields } from './json-fields.js';
import { BackWriter, JsonRlpReject, materialViews, writeBlockMaterial, type MaterialMarks } from './json-rlp.js';
import { pooledTransactionsRoot } from './pooled-blob-root.js';
import { receiptFromJson } from './receipt-json.js';
import { transactionFromJson } from './transaction-json.js';
import { withdrawalFromJson } from './withdrawal-json.js';

export { headerFromJson } from './header-json.js';
export { receiptFromJson } from './receipt-json.js';
export { transactionFromJson } from './transaction-json.js';
export { withdrawalFromJson } from './withdrawal-json.js';

export interface ConvertedBlock {
  /** What `recordBlocks` writes. */
  readonly material: BlockMaterial;
  readonly header: BlockHeader;
  readonly transactions: readonly Transaction[];
  /** Present from Shanghai on. */
  readonly withdrawals: readonly Withdrawal[] | undefined;
  /** null when converted without receipts. */
  readonly receipts: readonly Receipt[] | null;
}

export interface ConvertOptions {
  /**
   * Also accept a transactions root taken over blob transactions' pooled form (anvil ≤ 1.7.1, see
   * pooled-blob-root.ts). Every other check stays; off by default, for dev chains only.
   */
  readonly pooledBlobRoots?: boolean;
}

export async function materialFromJson(block: unknown, receipts: readonly unknown[] | null, options: ConvertOptions = {}): Promise<ConvertedBlock> {
  const { hash, header, transactions, withdrawals, receipts: decodedReceipts, transactionsJson } = blockFromJson(block, receipts, true);
  const params: VerifyBlockParameters = { header, transactions, withdrawals, uncles: [], expectedHash: hash, receipts: decodedReceipts ?? undefined };
  await verifyMaterial(params, transactionsJson, options.pooledBlobRoots === true);
  return { material: encodeMaterial(hash, header, transactions, withdrawals, decodedReceipts), header, transactions, withdrawals, receipts: decodedReceipts };
}

/**
 * The same conversion, verified the other way round: the JSON is written straight into the bytes the chain tables
 * store (net/rpc/json-rlp.ts: hex fields decoded into their RLP slots, no objects in between, byte-identical to
 * decoding and encoding), and those bytes are verified against the header by `verifyBlockMaterialBytes` — the same
 * checks in the same order with the same errors as `verifyBlock` (net/eth/verify-material.ts), with hashing
 * batched and each receipt's bloom computed once, from its logs' raw bytes. Malformed JSON throws the object path's
 * error (`UpstreamFormatError`, `InvalidFieldError`). No pooled-form blob root fallback here: such a block fails,
 * and `materialFromJson` is the path that may accept it.
 *
 * `writer` (optional) is where the bytes go, back to front; the material's parts are views of it.
 */
export function verifiedMaterialFromJson(block: unknown, receipts: readonly unknown[] | null, writer?: BackWriter): { material: BlockMaterial; hash: Hash; parentHash: Hash } {
  const w = writer ?? new BackWriter(64 * 1024);
  const views = materialViews(w, writeMaterial(w, block, receipts));
  const verified = verifyBlockMaterialBytes({ header: views.header, body: views.body, receipts: views.receipts, expectedHash: bytesToHex(views.hash) });
  return { material: { number: verified.header.number, ...views }, hash: verified.hash, parentHash: verified.header.parentHash };
}

/**
 * `writeBlockMaterial`, with the object path's error for JSON it refuses: the object path runs on the same JSON and
 * throws what it always has. (That it would accept what the writer refused is a bug, reported as such.)
 */
export function writeMaterial(w: BackWriter, block: unknown, receipts: readonly unknown[] | null): MaterialMarks {
  try {
    return writeBlockMaterial(w, block, receipts);
  } catch (error) {
    if (!(error instanceof JsonRlpReject)) throw error;
    const { hash, header, transactions, withdrawals, receipts: decoded } = blockFromJson(block, receipts, false);
    encodeMaterial(hash, header, transactions, withdrawals, decoded);
    throw new Error(`the direct JSON → RLP writer refused field ${error.field} of a block the object path accepts (${hash}); this is a bug in net/rpc/json-rlp.ts`);
  }
}

/** The block's JSON decoded (receipts' blooms from their logs when `blooms`; the eth/69 form has none to encode). */
function blockFromJson(block: unknown, receipts: readonly unknown[] | null, blooms: boolean) {
  const f = new JsonFields(block, 'block');
  const hash = f.fixed('hash', 32);
  const header = headerFromJson(block);
  const subject = `block ${header.number}`;
  const transactionsJson = f.list('transactions');
  const transactions = transactionsJson.map((tx, i) => {
    if (typeof tx === 'string') throw new UpstreamFormatError(subject, 'transactions', 'transaction hashes only; request the block with full transactions (second parameter true)');
    return transactionFromJson(tx, i);
  });
  if (f.has('uncles') && f.list('uncles').length > 0) {
    throw new UpstreamFormatError(subject, 'uncles', 'the block has uncles; this source follows post-merge chains, where blocks have none');
  }
  const withdrawals = f.has('withdrawals') ? f.list('withdrawals').map(withdrawalFromJson) : undefined;
  const decodedReceipts = receipts === null ? null : receipts.map((receipt, i) => receiptFromJson(receipt, i, blooms));
  return { hash, header, transactions, withdrawals, receipts: decodedReceipts, transactionsJson };
}

function encodeMaterial(hash: Hash, header: BlockHeader, transactions: Transaction[], withdrawals: Withdrawal[] | undefined, receipts: Receipt[] | null): BlockMaterial {
  return {
    number: header.number,
    hash: hexToBytes(hash),
    header: encodeHeader(header),
    body: encodeBlockBody({ transactions, uncles: [], ...(withdrawals === undefined ? {} : { withdrawals }) }),
    receipts: receipts === null ? null : encodeEth69Receipts(receipts),
  };
}

/**
 * verifyBlock. When only the transactions root fails and it matches the blob transactions' pooled form, the block
 * is accepted with `pooledBlobRoots` (everything else re-verified against the canonical root; the block hash was
 * already checked), and refused with an error that says so otherwise.
 */
async function verifyMaterial(params: VerifyBlockParameters, transactionsJson: readonly unknown[], pooledBlobRoots: boolean): Promise<void> {
  try {
    await verifyBlock(params);
    return;
  } catch (error) {
    if (!(error instanceof BlockVerificationError) || error.field !== 'transactionsRoot') throw error;
    if ((await pooledTransactionsRoot(transactionsJson, params.transactions)) !== params.header.transactionsRoot) throw error;
    if (!pooledBlobRoots) throw new PooledBlobRootError(error.expected, error.actual, error.blockNumber, error.blockHash);
  }
  const canonicalRoot = await transactionsRoot(params.transactions);
  await verifyBlock({ ...params, header: { ...params.header, transactionsRoot: canonicalRoot }, expectedHash: undefined });
}
