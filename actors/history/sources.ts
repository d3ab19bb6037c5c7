/**
 * The history lane's sources, built from `[[sources.history]]`: `rpc` (net/history/rpc-history.ts), `devnet`
 * (the embedded devnet's chain as the node recorded it, re-verified from its bytes by the same check the live
 * ingest uses for stored material), `p2p` (the live lane's devp2p peers, asked through the `source` lane:
 * net/p2p/history-range.ts) and `era` (Era1 files, era-source.ts). Each fetches a range of blocks, verified, and
 * answers a probe.
 */
import { getBodyBytes, getCanonicalHash, getHeaderBytes, getReceiptsBytes } from '../../store/chain-material.js';
import type { Store } from '../../store/store.js';
import { decodeU64KeyAsNumber } from '../../store/keys.js';
import { BlockVerificationError, EthFormatError } from '../../net/eth/errors.js';
import { bytesToHex, type Hash } from '../../net/eth/hex.js';
import { verifyBlockMaterialBytes } from '../../net/eth/verify-material.js';
import { HistoryBlockError, type HeaderLink, type HistoryBlock } from '../../net/history/history-block.js';
import { createRpcHistory, type RpcHistory } from '../../net/history/rpc-history.js';
import type { RpcBatchInput, RpcBatchOutcome } from '../../net/history/rpc-batch.js';
import { CodedError } from '../../runtime/errors.js';
import { JsonFields } from '../../net/rpc/json-fields.js';
import { eraSource } from './era-source.js';
import { p2pSource } from './p2p-source.js';
import type { HistoryBlocksAsk, HistoryHeadersAsk, HistoryRangeAsk, SourceReplies } from '../sources/messages.js';

export type HistorySourceKind = 'rpc' | 'devnet' | 'era' | 'p2p';

export interface HistorySourceArgs {
  readonly id: string;
  readonly kind: HistorySourceKind;
  readonly concurrency: number;
  readonly url: string;
  readonly batchBlocks: number;
  readonly requestTimeoutMs: number;
  readonly maxRetries: number;
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
  readonly pooledBlobRoots: boolean;
  /** kind rpc: `raw`, `json` or `auto` (net/history/rpc-history.ts). */
  readonly encoding: 'auto' | 'raw' | 'json';
  /** kind era: a directory of Era1 files (absolute), or "" with `url` the HTTP base of an Era1 archive. */
  readonly path?: string;
  /** kind era with url: where downloaded files are kept (absolute), and how many at most. */
  readonly cacheDir?: string;
  readonly cacheFiles?: number;
}

export interface ProbeResult {
  readonly source: string;
  readonly kind: HistorySourceKind;
  readonly chainId: number;
  readonly chainIdMatches: boolean;
  readonly earliestBlock: number;
  readonly latestBlock: number;
  readonly receiptsAvailable: boolean;
  /** kind rpc: how blocks are asked for (`raw` debug_ getters or `json` eth_ methods; for encoding = auto, what the upstream answered). */
  readonly blockEncoding?: 'raw' | 'json';
  /** kind p2p: the qualified peers connected, and how many of them announce a range holding `latestBlock`. */
  readonly peers?: { readonly connected: number; readonly holding: number };
  readonly latencyMs: number;
  readonly sampleBlock: { readonly number: number; readonly hash: Hash; readonly verified: true } | null;
  readonly sampleError: string | null;
  /**
   * kind era: where the source's range ends whatever the archive holds, and why (Era1 files hold the pre-merge
   * chain only), and the blocks between earliestBlock and latestBlock the archive has no file for.
   */
  readonly rangeLimit?: { readonly lastBlock: number; readonly reason: string };
  readonly missingBlocks?: ReadonlyArray<{ readonly fromBlock: number; readonly toBlock: number }>;
  readonly probedAt: string;
}

export interface HistorySource {
  readonly id: string;
  readonly kind: HistorySourceKind;
  /** Whether fetched blocks must be recorded in the chain tables before a processor reads them (devnet's already are). */
  readonly recordsNeeded: boolean;
  /**
   * Blocks from..to, verified, ascending. `topHash` is the proven hash of block `to` when the lane knows it: a source
   * that can ask by hash (kind p2p) uses it to leave out peers on another branch; the lane checks the link either way.
   */
  fetchRange(from: number, to: number, topHash?: Hash | null): Promise<HistoryBlock[]>;
  /** Headers only (number, computed hash, parent hash), ascending: the anchoring walk below the recorded chain (`topHash` as above). */
  fetchHeaders(from: number, to: number, topHash?: Hash | null): Promise<HeaderLink[]>;
  /** The transaction locator (kind rpc: the upstream's eth_getTransactionByHash), or null when the source has none. */
  readonly transactionBlock: ((hash: string) => Promise<number | null>) | null;
  /** The block locator (kind rpc: the upstream's eth_getBlockByHash), or null. */
  readonly blockNumberOf: ((hash: string) => Promise<number | null>) | null;
  probe(nodeChainId: number): Promise<ProbeResult>;
  /**
   * A source that proves canonicality itself (kind era on a mainnet node: a block of a file whose accumulator root
   * is one of mainnet's epoch roots the node ships) answers the canonical block's link at a height; the anchoring
   * walk (anchor.ts) then needs no header chain down from the recorded chain. Absent: hash links prove it.
   */
  readonly canonicalLink?: (number: number) => Promise<HeaderLink>;
  /** Why the source cannot serve blocks `from`..`to` at all (kind era: past the merge), or null; asked when a job is created. */
  readonly outOfRange?: (from: number, to: number) => string | null;
  /** Releases what the source holds open (kind era: its files); called when the lane stops. */
  readonly close?: () => Promise<void>;
}

/** An ask of the live `source` lane (kind p2p) for history: what the history lane's context gives a p2p source. */
export type AskPeers = <M extends HistoryBlocksAsk | HistoryHeadersAsk | HistoryRangeAsk>(message: M, timeoutMs: number) => Promise<SourceReplies[M['type']]>;

/** What a source may need from the lane besides its configuration. */
export interface HistorySourceContext {
  readonly signal: AbortSignal;
  /** The node's chain id (kind era proves canonicality only on mainnet). */
  readonly chainId: number;
  /**
   * Where an rpc source's batches are parsed, converted and verified (the node's CPU pool, task `convertRpcBatch`);
   * absent, on the calling thread.
   */
  readonly convertBatch?: (input: RpcBatchInput) => Promise<RpcBatchOutcome>;
  /** The live lane's peers (kind p2p). */
  readonly askPeers?: AskPeers;
  /** Progress of long work (kind era: files downloaded and verified). */
  readonly log?: (level: 'info' | 'warn', message: string, fields: Record<string, unknown>) => void;
}

export function createHistorySource(args: HistorySourceArgs, store: Store, context: HistorySourceContext): HistorySource {
  switch (args.kind) {
    case 'rpc': return rpcSource(args, context.signal, context.convertBatch);
    case 'devnet': return devnetSource(args, store);
    case 'era': return eraSource(args, context);
    case 'p2p':
      if (!context.askPeers) throw new Error(`history source '${args.id}': kind p2p needs the live lane's peers`);
      return p2pSource(args, store, context.signal, context.askPeers);
  }
}

function rpcSource(args: HistorySourceArgs, signal: AbortSignal, convertBatch?: (input: RpcBatchInput) => Promise<RpcBatchOutcome>): HistorySource {
  const history: RpcHistory = createRpcHistory({
    url: args.url, concurrency: args.concurrency, batchBlocks: args.batchBlocks, timeoutMs: args.requestTimeoutMs, maxRetries: args.maxRetries,
    backoffInitialMs: args.backoffInitialMs, backoffMaxMs: args.backoffMaxMs, pooledBlobRoots: args.pooledBlobRoots, encoding: args.encoding, signal,
    ...(convertBatch ? { convertBatch } : {}),
  });
  return {
    id: args.id, kind: 'rpc', recordsNeeded: true,
    fetchRange: (from, to) => history.fetchRange(from, to),
    fetchHeaders: (from, to) => history.fetchHeaders(from, to),
    transactionBlock: (hash) => history.transactionBlock(hash),
    blockNumberOf: (hash) => history.blockNumberOf(hash),
    async probe(nodeChainId) {
      const started = performance.now();
      const chainIdHex = await history.client.call<string>('eth_chainId', []);
      const latencyMs = Math.round((performance.now() - started) * 100) / 100;
      const chainId = Number(BigInt(chainIdHex));
      const latestBlock = Number(BigInt(await history.client.call<string>('eth_blockNumber', [])));
      const earliest = await history.client.call('eth_getBlockByNumber', ['earliest', false]);
      const earliestBlock = earliest === null ? 0 : new JsonFields(earliest, 'block').number('number');
      const blockEncoding = await history.encodingFor(latestBlock);
      const sample = await sampleOf(() => history.fetchRange(latestBlock, latestBlock));
      return { source: args.id, kind: 'rpc', chainId, chainIdMatches: chainId === nodeChainId, earliestBlock, latestBlock, latencyMs, blockEncoding, ...sample, probedAt: new Date().toISOString() };
    },
  };
}

export async function sampleOf(fetch: () => Promise<HistoryBlock[]>): Promise<Pick<ProbeResult, 'sampleBlock' | 'sampleError' | 'receiptsAvailable'>> {
  try {
    const [block] = await fetch();
    return { sampleBlock: { number: block!.number, hash: block!.hash, verified: true }, sampleError: null, receiptsAvailable: block!.material.receipts !== null };
  } catch (error) {
    if (!(error instanceof HistoryBlockError)) throw error;
    return { sampleBlock: null, sampleError: error.message, receiptsAvailable: !/receipts/.test(error.reason) };
  }
}

/** The devnet's canonical chain from the chain tables, each block re-verified from its stored bytes. */
function devnetSource(args: HistorySourceArgs, store: Store): HistorySource {
  const read = (number: number): HistoryBlock => {
    const hash = getCanonicalHash(store, number);
    if (!hash) throw new HistoryBlockError(number, 'the devnet has no canonical block at this height (not produced yet, or not retained)');
    const header = getHeaderBytes(store, hash, number);
    const body = getBodyBytes(store, hash, number);
    if (!header || !body) throw new HistoryBlockError(number, 'the devnet block is canonical but its material is not recorded');
    const receipts = getReceiptsBytes(store, hash, number) ?? null;
    try {
      const verified = verifyBlockMaterialBytes({ header, body, receipts, expectedHash: bytesToHex(hash) });
      return { number, hash: verified.hash, parentHash: verified.header.parentHash, material: { number, hash, header, body, receipts } };
    } catch (error) {
      if (error instanceof BlockVerificationError) throw new HistoryBlockError(number, `verification failed: ${error.field} mismatch (header says ${error.expected}, material gives ${error.actual})`);
      if (error instanceof EthFormatError) throw new HistoryBlockError(number, `malformed material: ${error.message}`);
      throw error;
    }
  };
  const bound = (reverse: boolean): number | null => {
    for (const key of store.chain.canonical.getKeys({ reverse, limit: 1 })) return decodeU64KeyAsNumber(key);
    return null;
  };
  return {
    id: args.id, kind: 'devnet', recordsNeeded: false,
    async fetchRange(from, to) {
      const blocks: HistoryBlock[] = [];
      for (let n = from; n <= to; n += 1) blocks.push(read(n));
      return blocks;
    },
    async fetchHeaders(from, to) {
      const links: HeaderLink[] = [];
      for (let n = from; n <= to; n += 1) {
        const { number, hash, parentHash } = read(n);
        links.push({ number, hash, parentHash });
      }
      return links;
    },
    // The devnet's transactions are all in the canonical transaction index already.
    transactionBlock: null,
    blockNumberOf: null,
    async probe(nodeChainId) {
      const latestBlock = bound(true);
      const earliestBlock = bound(false);
      if (latestBlock === null || earliestBlock === null) throw new CodedError('source_unavailable', `history source '${args.id}': the devnet has produced no block yet`);
      const started = performance.now();
      const sample = await sampleOf(async () => [read(latestBlock)]);
      const latencyMs = Math.round((performance.now() - started) * 100) / 100;
      return { source: args.id, kind: 'devnet', chainId: nodeChainId, chainIdMatches: true, earliestBlock, latestBlock, latencyMs, ...sample, probedAt: new Date().toISOString() };
    },
  };
}
