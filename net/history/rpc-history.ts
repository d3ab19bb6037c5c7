/**
 * A history source of kind `rpc`: an upstream archive node's JSON-RPC, read by block number. A range is fetched in
 * batches of `batchBlocks` blocks (two calls per block, one HTTP request per batch), at most `concurrency` batches
 * in flight, each request with the live rpc source's timeout, retry and backoff rules (net/rpc/client.ts). The two
 * calls are the raw getters `debug_getRawBlock(n)` and `debug_getRawReceipts(n)` where the upstream serves them
 * (net/history/raw-batch.ts: fewer bytes, no per-field conversion), else `eth_getBlockByNumber(n, true)` and
 * `eth_getBlockReceipts(n)` (converted by `materialFromJson`, the live rpc source's own path). Either way every block
 * is verified — block hash, transactions, withdrawals and receipts roots, blob gas, bloom, gas used — before it
 * leaves this module.
 *
 * Every request this source sends (materialization chunks, header walks, on-demand JSON-RPC history, transaction
 * lookups) takes one of the same `concurrency` slots, so the source's ceiling holds whoever asks (spec §4.7).
 */
import { BlockVerificationError } from '../eth/errors.js';
import { EthFormatError } from '../eth/errors.js';
import { bytesToHex, type Hash } from '../eth/hex.js';
import { createRpcClient, type RpcCall, type RpcClient } from '../rpc/client.js';
import { materialFromJson } from '../rpc/convert.js';
import { UpstreamError, UpstreamFormatError } from '../rpc/errors.js';
import { JsonFields } from '../rpc/json-fields.js';
import { hashHeader } from '../eth/header.js';
import { headerFromJson } from '../rpc/header-json.js';
import { HistoryBlockError, type HistoryBlock, type HeaderLink } from './history-block.js';
import { createSlots } from './slots.js';
import { unpackRpcBatch, type RpcBatchInput, type RpcBatchOutcome } from './rpc-batch.js';
import { convertRawBody, RAW_BLOCK_METHOD, RAW_RECEIPTS_METHOD, resolveRawAnswers, type HistoryEncoding } from './raw-batch.js';

export interface RpcHistoryOptions {
  readonly url: string;
  readonly concurrency: number;
  readonly batchBlocks: number;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
  readonly pooledBlobRoots: boolean;
  /**
   * How blocks are asked for: `raw` (`debug_getRawBlock` + `debug_getRawReceipts`, net/history/raw-batch.ts), `json`
   * (`eth_getBlockByNumber(n, true)` + `eth_getBlockReceipts`), or `auto`: raw when the upstream answers the raw
   * methods (asked once, with the first batch's first block), else json.
   */
  readonly encoding: 'auto' | HistoryEncoding;
  readonly signal?: AbortSignal;
  /**
   * Parses, converts and verifies a batch's answer elsewhere (the node's CPU pool, rpc-batch.ts); null from it, or
   * no such function, and this thread does it.
   */
  readonly convertBatch?: (input: RpcBatchInput) => Promise<RpcBatchOutcome>;
}

export interface RpcHistory {
  readonly endpoint: string;
  /** The encoding blocks are asked in (for `auto`, decided with the first block asked for). */
  encodingFor(number: number): Promise<HistoryEncoding>;
  readonly client: RpcClient;
  /** Blocks `from`..`to` (inclusive), ascending, each verified; throws HistoryBlockError naming the first bad block. */
  fetchRange(from: number, to: number): Promise<HistoryBlock[]>;
  /** Headers `from`..`to`, ascending, each hash computed here from the header fields (never taken from the upstream). */
  fetchHeaders(from: number, to: number): Promise<HeaderLink[]>;
  /** The block number the upstream says includes transaction `hash`, or null when it knows no such mined transaction. */
  transactionBlock(hash: string): Promise<number | null>;
  /** The number the upstream gives the block with this hash, or null when it has none. */
  blockNumberOf(hash: string): Promise<number | null>;
}

const quantity = (n: number) => `0x${n.toString(16)}`;

export function createRpcHistory(options: RpcHistoryOptions): RpcHistory {
  const client = createRpcClient({
    url: options.url, timeoutMs: options.timeoutMs, maxRetries: options.maxRetries,
    backoffInitialMs: options.backoffInitialMs, backoffMaxMs: options.backoffMaxMs, ...(options.signal ? { signal: options.signal } : {}),
  });

  const slots = createSlots(options.concurrency);

  /** The encoding in use: as configured, or for `auto` what the upstream answered to the raw methods (asked once). */
  let encoding: Promise<HistoryEncoding> | null = options.encoding === 'auto' ? null : Promise.resolve(options.encoding);
  const encodingFor = (number: number): Promise<HistoryEncoding> => {
    encoding ??= probeEncoding(number).catch((error: unknown) => {
      encoding = null; // a transport failure decides nothing; the next batch asks again
      throw error;
    });
    return encoding;
  };
  async function probeEncoding(number: number): Promise<HistoryEncoding> {
    try {
      await slots.run(() => client.batch([{ method: RAW_BLOCK_METHOD, params: [quantity(number)] }, { method: RAW_RECEIPTS_METHOD, params: [quantity(number)] }]));
      return 'raw';
    } catch (error) {
      // Any JSON-RPC error (the method does not exist, the namespace is disabled, …), or a client error status some
      // providers give a method they do not serve: the eth_ methods, as before. Rate limits and transport or server
      // failures decide nothing (thrown, asked again with the next batch).
      if (error instanceof UpstreamError && (error.failure === 'rpc' || (error.failure === 'http' && error.status !== undefined && error.status >= 400 && error.status < 500 && error.status !== 429))) return 'json';
      throw error;
    }
  }

  async function fetchBatch(from: number, to: number): Promise<HistoryBlock[]> {
    let chosen: HistoryEncoding;
    try {
      chosen = await encodingFor(from);
    } catch (error) {
      if (error instanceof UpstreamError) throw new HistoryBlockError(from, `the upstream failed blocks ${from}-${to}: ${error.message}`);
      throw error;
    }
    const calls: RpcCall[] = [];
    for (let n = from; n <= to; n += 1) {
      if (chosen === 'raw') calls.push({ method: RAW_BLOCK_METHOD, params: [quantity(n)] }, { method: RAW_RECEIPTS_METHOD, params: [quantity(n)] });
      else calls.push({ method: 'eth_getBlockByNumber', params: [quantity(n), true] }, { method: 'eth_getBlockReceipts', params: [quantity(n)] });
    }
    let answers: unknown[];
    try {
      let raw = await slots.run(() => client.batchRaw(calls));
      if (options.convertBatch) {
        // The answer's bytes move to the pool (not copied); a refused batch hands them back.
        const outcome = await options.convertBatch({ bytes: raw.bytes, ids: raw.ids, from, to, pooledBlobRoots: options.pooledBlobRoots, encoding: chosen });
        if ('packed' in outcome) return unpackRpcBatch(outcome.packed);
        raw = { ...raw, bytes: outcome.refused };
      } else if (chosen === 'raw') {
        const blocks = convertRawBody(raw.bytes, raw.ids, from, to);
        if (blocks) return blocks;
      }
      // Here, or when the batch is not wholly verified material: resolved on this thread, which names what is wrong.
      answers = client.resolveBatch(raw);
    } catch (error) {
      if (error instanceof UpstreamError) throw new HistoryBlockError(from, `the upstream failed blocks ${from}-${to}: ${error.message}`);
      throw error;
    }
    const blocks: HistoryBlock[] = [];
    for (let i = 0; i <= to - from; i += 1) {
      blocks.push(chosen === 'raw' ? resolveRawAnswers(from + i, answers[2 * i], answers[2 * i + 1]) : await convert(from + i, answers[2 * i], answers[2 * i + 1], options.pooledBlobRoots));
    }
    return blocks;
  }

  return {
    endpoint: client.endpoint,
    encodingFor,
    client,
    async fetchRange(from, to) {
      const batches: Array<[number, number]> = [];
      for (let start = from; start <= to; start += options.batchBlocks) batches.push([start, Math.min(to, start + options.batchBlocks - 1)]);
      const results: HistoryBlock[][] = new Array(batches.length);
      let next = 0;
      const worker = async () => {
        while (next < batches.length) {
          const index = next++;
          const [a, b] = batches[index]!;
          results[index] = await fetchBatch(a, b);
        }
      };
      await Promise.all(Array.from({ length: Math.min(options.concurrency, batches.length) }, worker));
      return results.flat();
    },
    async fetchHeaders(from, to) {
      const calls: RpcCall[] = [];
      for (let n = from; n <= to; n += 1) calls.push({ method: 'eth_getBlockByNumber', params: [quantity(n), false] });
      let answers: unknown[];
      try {
        answers = await slots.run(() => client.batch(calls));
      } catch (error) {
        if (error instanceof UpstreamError) throw new HistoryBlockError(to, `the upstream failed headers ${from}-${to}: ${error.message}`);
        throw error;
      }
      return answers.map((answer, i) => headerLink(from + i, answer));
    },
    async transactionBlock(hash) {
      let answer: unknown;
      try {
        answer = await slots.run(() => client.call('eth_getTransactionByHash', [hash]));
      } catch (error) {
        if (error instanceof UpstreamError) throw new HistoryBlockError(-1, `the upstream failed eth_getTransactionByHash: ${error.message}`);
        throw error;
      }
      if (answer === null || answer === undefined) return null;
      const blockNumber = (answer as { blockNumber?: unknown }).blockNumber;
      if (blockNumber === null || blockNumber === undefined) return null;
      return new JsonFields(answer, 'transaction').number('blockNumber');
    },
    async blockNumberOf(hash) {
      let answer: unknown;
      try {
        answer = await slots.run(() => client.call('eth_getBlockByHash', [hash, false]));
      } catch (error) {
        if (error instanceof UpstreamError) throw new HistoryBlockError(-1, `the upstream failed eth_getBlockByHash: ${error.message}`);
        throw error;
      }
      if (answer === null || answer === undefined) return null;
      return new JsonFields(answer, 'block').number('number');
    },
  };
}

/** One header JSON → its number, locally computed hash and parent hash. */
function headerLink(number: number, block: unknown): HeaderLink {
  if (block === null || block === undefined) throw new HistoryBlockError(number, 'the upstream does not have this block');
  try {
    const header = headerFromJson(block);
    if (header.number !== number) throw new HistoryBlockError(number, `the upstream answered with block ${header.number}`);
    return { number, hash: hashHeader(header), parentHash: header.parentHash };
  } catch (error) {
    if (error instanceof UpstreamFormatError || error instanceof EthFormatError) throw new HistoryBlockError(number, `malformed header: ${error.message}`);
    throw error;
  }
}

/** One block's JSON and receipts JSON → a verified HistoryBlock, or HistoryBlockError saying why not. */
export async function convert(number: number, block: unknown, receipts: unknown, pooledBlobRoots: boolean): Promise<HistoryBlock> {
  if (block === null || block === undefined) throw new HistoryBlockError(number, 'the upstream does not have this block');
  if (receipts === null || receipts === undefined) throw new HistoryBlockError(number, 'the upstream did not serve its receipts (eth_getBlockReceipts answered null)');
  if (!Array.isArray(receipts)) throw new HistoryBlockError(number, 'eth_getBlockReceipts did not answer with an array');
  try {
    const answered = new JsonFields(block, 'block').number('number');
    if (answered !== number) throw new HistoryBlockError(number, `the upstream answered with block ${answered}`);
    const converted = await materialFromJson(block, receipts, { pooledBlobRoots });
    return { number, hash: bytesToHex(converted.material.hash) as Hash, parentHash: converted.header.parentHash, material: converted.material };
  } catch (error) {
    if (error instanceof BlockVerificationError) throw new HistoryBlockError(number, `verification failed: ${error.field} mismatch (header says ${error.expected}, material gives ${error.actual})`);
    if (error instanceof UpstreamFormatError || error instanceof EthFormatError) throw new HistoryBlockError(number, `malformed material: ${error.message}`);
    throw error;
  }
}
