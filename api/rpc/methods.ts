/**
 * The JSON-RPC methods this node answers from its verified store, each a synchronous function of
 * its parameters returning the `result` JSON (text, or bytes for pre-rendered blocks). Absent data
 * is `null` exactly where an execution client answers null (an unknown hash, a future block); data
 * the node does not hold (a block below retention, receipts its source did not provide, EVM state)
 * is an error, never null or zero.
 */
import { blobBaseFee } from '../../net/eth/blob-fee.js';
import { blobParamsAt } from '../../net/eth/fork-schedule.js';
import { bytesToHex } from '../../net/eth/hex.js';
import { lookupTransaction } from '../../store/tx-index.js';
import { getHeaderBytes } from '../../store/chain-material.js';
import { decodeHeader } from '../../net/eth/header.js';
import { encodeReceipt } from '../../net/eth/receipt.js';
import type { BlockView } from './block-view.js';
import { renderEthConfig } from './eth-config.js';
import { array, quantity } from './json-text.js';
import { bloomBytes, compileBloomCheck, logMatches, parseLogCriteria } from './logs-filter.js';
import { argumentError, expectParams, parseBlockSelector, parseBlockSelectorOrHash, parseBool, parseHash, type BlockSelector, type BlockSelectorOrHash } from './params.js';
import { renderBlock } from './render-block.js';
import { blockLogs, blockReceipts } from './render-receipt.js';
import { renderTransaction } from './render-transaction.js';
import type { RpcContext } from './rpc-context.js';
import { finalityUnavailable, invalidParams, limitExceeded, rangeIncomplete } from './rpc-errors.js';
import { HistoryHole } from './history-hole.js';

export type RpcResult = string | Buffer;
export type RpcMethod = (params: readonly unknown[], ctx: RpcContext) => RpcResult;

/** The canonical block a selector names; undefined above the head (an execution client answers null there). */
function selectBlock(ctx: RpcContext, selector: BlockSelector): BlockView | undefined {
  const { chain } = ctx;
  let number: number;
  if ('number' in selector) number = selector.number;
  else if (selector.tag === 'latest' || selector.tag === 'pending') {
    const head = chain.head();
    if (!head) throw rangeIncomplete('no canonical block yet');
    number = head.number;
  } else if (selector.tag === 'earliest') {
    const earliest = chain.earliest();
    if (!earliest) throw rangeIncomplete('no canonical block yet');
    number = earliest.number;
  } else {
    const finalized = chain.finalized();
    if (!finalized) throw finalityUnavailable(`${selector.tag} block not found`);
    number = finalized.number;
  }
  const head = chain.head();
  if (!head || number > head.number) return undefined;
  const view = chain.canonicalBlock(number) ?? chain.historicalBlock(number);
  if (!view) {
    const earliest = chain.earliest();
    const message = `block ${number} is not retained by this node`;
    const details = { block: number, retained: earliest ? { from: earliest.number, to: head.number } : null };
    // Below the recorded chain, on-demand history fetches it (api/rpc/history-hole.ts).
    if (ctx.history && earliest && number < earliest.number) throw new HistoryHole({ kind: 'range', from: number, to: number }, message, details);
    throw rangeIncomplete(message, details);
  }
  return view;
}

/** A recorded block by hash; unknown: the history source's locator may place it (on demand), else null. */
function blockByHash(ctx: RpcContext, hash: Uint8Array): BlockView | undefined {
  const view = ctx.chain.block(hash);
  if (!view && ctx.history?.locator) throw new HistoryHole({ kind: 'block', hash: bytesToHex(hash) }, 'unknown block', {}, 'null');
  return view;
}

/** A block by hash (recorded, canonical or not, as execution clients serve it) or by selector. */
function selectBlockOrHash(ctx: RpcContext, selector: BlockSelectorOrHash): BlockView | undefined {
  if ('hash' in selector) return blockByHash(ctx, selector.hash);
  return selectBlock(ctx, selector);
}

function headView(ctx: RpcContext): BlockView {
  const view = selectBlock(ctx, { tag: 'latest' });
  if (!view) throw rangeIncomplete('no canonical block yet');
  return view;
}

function receiptsOf(view: BlockView, ctx: RpcContext): readonly string[] {
  const receipts = blockReceipts(view, ctx.spec.schedule);
  if (!receipts) throw rangeIncomplete(`the receipts of block ${view.number} (${view.hash}) are not available from this node's source`, { block: view.number, blockHash: view.hash });
  return receipts;
}

const eth_getBlockByNumber: RpcMethod = (params, ctx) => {
  expectParams(params, 2, 2);
  const view = selectBlock(ctx, parseBlockSelector(params[0], 0));
  return view ? renderBlock(view, parseBool(params[1], 1)) : 'null';
};

const eth_getBlockByHash: RpcMethod = (params, ctx) => {
  expectParams(params, 2, 2);
  const view = blockByHash(ctx, parseHash(params[0], 0));
  return view ? renderBlock(view, parseBool(params[1], 1)) : 'null';
};

const eth_getBlockReceipts: RpcMethod = (params, ctx) => {
  expectParams(params, 1, 1);
  const view = selectBlockOrHash(ctx, parseBlockSelectorOrHash(params[0], 0));
  if (!view) return 'null';
  return (view.rendered.receiptsArray ??= Buffer.from(array(receiptsOf(view, ctx) as string[])));
};

/** `debug_getRawHeader(block)`: the header's RLP as hex (execution-apis' raw getters; null where an execution client answers null). */
const debug_getRawHeader: RpcMethod = (params, ctx) => {
  expectParams(params, 1, 1);
  const view = selectBlockOrHash(ctx, parseBlockSelectorOrHash(params[0], 0));
  return view ? JSON.stringify(bytesToHex(view.rawHeader)) : 'null';
};

/** `debug_getRawBlock(block)`: the block's RLP `[header, transactions, uncles, withdrawals?]` as hex. */
const debug_getRawBlock: RpcMethod = (params, ctx) => {
  expectParams(params, 1, 1);
  const view = selectBlockOrHash(ctx, parseBlockSelectorOrHash(params[0], 0));
  return view ? `"0x${Buffer.from(view.rawBlock()).toString('hex')}"` : 'null';
};

/** `debug_getRawReceipts(block)`: each receipt's consensus encoding (`type || rlp([status, cumulativeGasUsed, bloom, logs])`) as hex. */
const debug_getRawReceipts: RpcMethod = (params, ctx) => {
  expectParams(params, 1, 1);
  const view = selectBlockOrHash(ctx, parseBlockSelectorOrHash(params[0], 0));
  if (!view) return 'null';
  receiptsOf(view, ctx);
  return array(view.receipts!.map((receipt) => `"0x${Buffer.from(encodeReceipt(receipt)).toString('hex')}"`));
};

/** The canonical block and index of a transaction, or undefined when the node knows no such canonical transaction. */
function locate(ctx: RpcContext, txHash: Uint8Array): { view: BlockView; index: number } | undefined {
  const location = lookupTransaction(ctx.chain.store, txHash);
  if (!location) {
    // A transaction below the recorded chain: the history source's locator names its block, which is then proven.
    if (ctx.history?.locator) throw new HistoryHole({ kind: 'transaction', hash: bytesToHex(txHash) }, 'unknown transaction', {}, 'null');
    return undefined;
  }
  const view = ctx.chain.block(location.blockHash);
  if (!view || !ctx.chain.isCanonical(view)) return undefined;
  return { view, index: location.index };
}

const eth_getTransactionReceipt: RpcMethod = (params, ctx) => {
  expectParams(params, 1, 1);
  const found = locate(ctx, parseHash(params[0], 0));
  return found ? receiptsOf(found.view, ctx)[found.index]! : 'null';
};

const eth_getTransactionByHash: RpcMethod = (params, ctx) => {
  expectParams(params, 1, 1);
  const found = locate(ctx, parseHash(params[0], 0));
  if (!found) return 'null';
  const { view, index } = found;
  return renderTransaction(view.body.transactions[index]!, {
    blockHash: view.hash, blockNumber: view.number, blockTimestamp: view.header.timestamp, baseFeePerGas: view.header.baseFeePerGas,
    index, hash: view.transactionHashes[index]!, from: view.senders[index]!,
  });
};

const eth_blockNumber: RpcMethod = (params, ctx) => {
  expectParams(params, 0, 0);
  const head = ctx.chain.head();
  if (!head) throw rangeIncomplete('no canonical block yet');
  return quantity(head.number);
};

const eth_chainId: RpcMethod = (params, ctx) => {
  expectParams(params, 0, 0);
  return quantity(ctx.spec.chainId);
};

const net_version: RpcMethod = (params, ctx) => {
  expectParams(params, 0, 0);
  return `"${ctx.spec.chainId}"`;
};

const web3_clientVersion: RpcMethod = (params, ctx) => {
  expectParams(params, 0, 0);
  return JSON.stringify(ctx.clientVersion);
};

/** The node follows its source's head; it has nothing to catch up on that a client could wait for. */
const eth_syncing: RpcMethod = (params) => {
  expectParams(params, 0, 0);
  return 'false';
};

const eth_blobBaseFee: RpcMethod = (params, ctx) => {
  expectParams(params, 0, 0);
  const { header, number } = headView(ctx);
  const blob = blobParamsAt(ctx.spec.schedule, { number, timestamp: header.timestamp });
  if (!blob || header.excessBlobGas === undefined) throw rangeIncomplete(`the head block ${number} predates blob transactions (Cancun)`);
  return quantity(blobBaseFee(header.excessBlobGas, blob.baseFeeUpdateFraction));
};

const eth_config: RpcMethod = (params, ctx) => {
  expectParams(params, 0, 0);
  const head = headView(ctx);
  const config = renderEthConfig(ctx.spec, head.header.timestamp);
  if (!config) throw rangeIncomplete(`the head block ${head.number} predates Cancun, where eth_config (EIP-7910) starts`);
  return config;
};

const node_getCapabilities: RpcMethod = (params, ctx) => {
  expectParams(params, 0, 0);
  return ctx.capabilitiesJson();
};

/** A filter's block range resolved against the head (geth's rules and messages). */
function logsRange(ctx: RpcContext, filter: Readonly<Record<string, unknown>>): { from: number; to: number } {
  const head = ctx.chain.head();
  if (!head) throw rangeIncomplete('no canonical block yet');
  const resolve = (value: unknown): number => {
    if (value === undefined || value === null) return head.number;
    const selector = parseBlockSelector(value, 0);
    if ('number' in selector) return selector.number;
    if (selector.tag === 'earliest') return ctx.chain.earliest()!.number;
    if (selector.tag === 'safe' || selector.tag === 'finalized') {
      const finalized = ctx.chain.finalized();
      if (!finalized) throw finalityUnavailable(`${selector.tag} block not found`);
      return finalized.number;
    }
    return head.number;
  };
  const from = resolve(filter.fromBlock);
  const to = resolve(filter.toBlock);
  if (from > head.number || to > head.number) throw invalidParams('block range extends beyond current head block');
  if (from > to) throw invalidParams('invalid block range params');
  const width = to - from + 1;
  // Both limits are worded as upstream providers word them, so indexers that split a range on the message (Ponder's
  // getLogsRetryHelper, for one) do so here too.
  if (width > ctx.limits.maxLogsBlockRange) {
    throw limitExceeded(`block range exceeds ${ctx.limits.maxLogsBlockRange} blocks (eth_getLogs covers ${width}); narrow the range`, { limit: ctx.limits.maxLogsBlockRange, requested: width });
  }
  const earliest = ctx.chain.earliest()!;
  if (from < earliest.number) {
    const details = { from, to, retained: { from: earliest.number, to: head.number } };
    if (!ctx.history) throw rangeIncomplete(`blocks ${from}..${earliest.number - 1} are not retained by this node`, details);
    // Below the recorded chain: on demand, within the on-demand range maximum; holes are fetched before any scan.
    const below = Math.min(to, earliest.number - 1) - from + 1;
    if (below > ctx.history.maxBlocks) {
      throw limitExceeded(`eth_getLogs reaches ${below} blocks below the blocks this node retains; on-demand history fetches at most ${ctx.history.maxBlocks} per request`, { limit: ctx.history.maxBlocks, requested: below });
    }
    let missingFrom = -1;
    let missingTo = -1;
    for (let number = from; number <= from + below - 1; number++) {
      if (ctx.chain.historicalBlockRecorded(number)) continue;
      if (missingFrom < 0) missingFrom = number;
      missingTo = number;
    }
    if (missingFrom >= 0) throw new HistoryHole({ kind: 'range', from: missingFrom, to: missingTo }, `blocks ${missingFrom}..${missingTo} are not retained by this node`, details);
  }
  return { from, to };
}

/** The logs of one block that match, appended to `out` (bounded by the result limit). */
function collectLogs(ctx: RpcContext, view: BlockView, criteria: ReturnType<typeof parseLogCriteria>, out: string[]): void {
  const logs = blockLogs(view);
  if (!logs) throw rangeIncomplete(`the receipts of block ${view.number} (${view.hash}) are not available from this node's source`, { block: view.number, blockHash: view.hash });
  const receipts = view.receipts!;
  receipts.forEach((receipt, txIndex) => receipt.logs.forEach((log, i) => {
    if (!logMatches(log, criteria)) return;
    if (out.length >= ctx.limits.maxLogsResults) throw limitExceeded(`query returned more than ${ctx.limits.maxLogsResults} results; narrow the block range or the filter`, { limit: ctx.limits.maxLogsResults });
    out.push(logs[txIndex]![i]!);
  }));
}

const eth_getLogs: RpcMethod = (params, ctx) => {
  expectParams(params, 1, 1);
  const filter = params[0];
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) throw argumentError(0, 'expected a filter object');
  const f = filter as Record<string, unknown>;
  const criteria = parseLogCriteria(f, 0);
  const out: string[] = [];
  if (f.blockHash !== undefined && f.blockHash !== null) {
    if ((f.fromBlock !== undefined && f.fromBlock !== null) || (f.toBlock !== undefined && f.toBlock !== null)) {
      throw argumentError(0, 'cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other');
    }
    const view = ctx.chain.block(parseHash(f.blockHash, 0));
    if (!view) throw invalidParams('unknown block');
    // As over a range: a block whose bloom rules the filter out is answered without its receipts (a p2p source
    // skips the receipts of blocks no processor's logs can be in).
    if (compileBloomCheck(criteria)(bloomBytes(view.header.logsBloom))) collectLogs(ctx, view, criteria, out);
    return array(out);
  }
  const { from, to } = logsRange(ctx, f);
  const mayMatch = compileBloomCheck(criteria);
  for (let number = from; number <= to; number++) {
    const hash = ctx.chain.canonicalHash(number) ?? ctx.chain.historyHash(number);
    if (!hash) throw rangeIncomplete(`block ${number} is not retained by this node`, { block: number });
    const headerBytes = getHeaderBytes(ctx.chain.store, hash);
    if (!headerBytes) throw rangeIncomplete(`block ${number} (${bytesToHex(hash)}) has no recorded header`, { block: number });
    if (!mayMatch(bloomBytes(decodeHeader(headerBytes).logsBloom))) continue;
    collectLogs(ctx, ctx.chain.block(hash)!, criteria, out);
  }
  return array(out);
};

/**
 * The served methods by name. A Map, never an object: a method name is client input, and an object
 * lookup would find `constructor`, `toString` or `__proto__` on Object.prototype and call it.
 */
export const METHODS: ReadonlyMap<string, RpcMethod> = new Map(Object.entries({
  eth_blockNumber, eth_chainId, eth_getBlockByNumber, eth_getBlockByHash, eth_getBlockReceipts, eth_getTransactionReceipt,
  eth_getTransactionByHash, eth_blobBaseFee, eth_syncing, eth_config, eth_getLogs, node_getCapabilities, net_version, web3_clientVersion,
  debug_getRawHeader, debug_getRawBlock, debug_getRawReceipts,
}));

/** Methods that need EVM state, which this node never keeps (capability reason `evm_state_unavailable`). */
export const STATE_METHODS = [
  'eth_getBalance', 'eth_getCode', 'eth_getStorageAt', 'eth_getTransactionCount', 'eth_call', 'eth_estimateGas', 'eth_getProof',
  'eth_createAccessList', 'eth_simulateV1',
] as const;

/** Ethereum methods this node knows and does not serve (capability reason `not_served`), not "method not found". */
export const UNSERVED_METHODS = [
  'eth_sendRawTransaction', 'eth_sendTransaction', 'eth_sign', 'eth_signTransaction', 'eth_accounts', 'eth_gasPrice', 'eth_maxPriorityFeePerGas',
  'eth_feeHistory', 'eth_newFilter', 'eth_newBlockFilter', 'eth_newPendingTransactionFilter', 'eth_getFilterChanges', 'eth_getFilterLogs',
  'eth_uninstallFilter', 'eth_getTransactionByBlockHashAndIndex', 'eth_getTransactionByBlockNumberAndIndex', 'eth_getBlockTransactionCountByHash',
  'eth_getBlockTransactionCountByNumber', 'eth_getUncleByBlockHashAndIndex', 'eth_getUncleByBlockNumberAndIndex', 'eth_getUncleCountByBlockHash',
  'eth_getUncleCountByBlockNumber', 'eth_mining', 'eth_hashrate', 'eth_coinbase', 'eth_protocolVersion', 'eth_getRawTransactionByHash',
] as const;
