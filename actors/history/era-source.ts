/**
 * The history source of kind `era` (issue 31): Era1 files from a directory or an HTTP archive
 * (net/era/era1-archive.ts), each verified against mainnet's epoch accumulator roots before a block of it is served
 * (net/era/era1-history.ts). On a mainnet node the source proves canonicality itself (`canonicalLink`): a block of
 * a file whose accumulator root is mainnet's is the canonical block at its height, so history is anchored without
 * a header walk down from the recorded chain — which Era1 could not serve, its range ending at the merge.
 *
 * The probe lists the archive (earliest and latest block, the blocks it has no file for), says where Era1's range
 * ends (the merge) and serves its earliest block verified — on mainnet the smallest file, which an HTTP archive
 * downloads for it.
 */
import { createEra1Archive } from '../../net/era/era1-archive.js';
import { createEra1History, ERA1_RANGE_REASON, type Era1History } from '../../net/era/era1-history.js';
import { EPOCH_BLOCKS } from '../../net/era/accumulator.js';
import { MAINNET_LAST_PRE_MERGE_BLOCK, mainnetEpochRoots } from '../../net/era/mainnet-epoch-roots.js';
import { HistoryBlockError } from '../../net/history/history-block.js';
import { CodedError } from '../../runtime/errors.js';
import type { HistorySource, HistorySourceArgs, HistorySourceContext, ProbeResult } from './sources.js';

const MAINNET_CHAIN_ID = 1;

export function eraSource(args: HistorySourceArgs, context: HistorySourceContext): HistorySource {
  const archive = createEra1Archive({
    path: args.path ?? '', url: args.url, cacheDir: args.cacheDir ?? '', cacheFiles: args.cacheFiles ?? 2, timeoutMs: args.requestTimeoutMs,
    maxRetries: args.maxRetries, backoffInitialMs: args.backoffInitialMs, backoffMaxMs: args.backoffMaxMs, signal: context.signal,
    ...(context.log ? { log: context.log } : {}),
  });
  const history: Era1History = createEra1History({
    archive, epochRoots: mainnetEpochRoots(), concurrency: args.concurrency, ...(context.log ? { log: context.log } : {}),
  });
  return {
    id: args.id, kind: 'era', recordsNeeded: true,
    fetchRange: (from, to) => history.fetchRange(from, to),
    fetchHeaders: (from, to) => history.fetchHeaders(from, to),
    // Era1 files have no transaction or block-hash index to look a hash up in.
    transactionBlock: null,
    blockNumberOf: null,
    ...(context.chainId === MAINNET_CHAIN_ID ? { canonicalLink: (number: number) => history.canonicalLink(number) } : {}),
    outOfRange: (from, to) => (to > MAINNET_LAST_PRE_MERGE_BLOCK
      ? `history source '${args.id}' (kind era) cannot serve blocks ${Math.max(from, MAINNET_LAST_PRE_MERGE_BLOCK + 1)}-${to}: ${ERA1_RANGE_REASON}`
      : null),
    probe: (nodeChainId) => probe(args.id, history, nodeChainId),
    close: () => history.close(),
  };
}

async function probe(id: string, history: Era1History, nodeChainId: number): Promise<ProbeResult> {
  const started = performance.now();
  let range;
  try {
    range = await history.range();
  } catch (error) {
    throw new CodedError('source_unavailable', `history source '${id}': cannot list the Era1 archive ${history.location}: ${(error as Error).message}`, { source: id });
  }
  const latencyMs = Math.round((performance.now() - started) * 100) / 100;
  if (range === null) throw new CodedError('source_unavailable', `history source '${id}': the Era1 archive ${history.location} holds no mainnet Era1 file (mainnet-NNNNN-xxxxxxxx.era1)`, { source: id });
  let sample: Pick<ProbeResult, 'sampleBlock' | 'sampleError' | 'receiptsAvailable'>;
  try {
    const [block] = await history.fetchRange(range.earliestBlock, range.earliestBlock);
    sample = { sampleBlock: { number: block!.number, hash: block!.hash, verified: true }, sampleError: null, receiptsAvailable: block!.material.receipts !== null };
  } catch (error) {
    if (!(error instanceof HistoryBlockError)) throw error;
    // Every Era1 file carries its blocks' receipts; a file that fails is refused whole.
    sample = { sampleBlock: null, sampleError: error.message, receiptsAvailable: true };
  }
  return {
    source: id, kind: 'era', chainId: MAINNET_CHAIN_ID, chainIdMatches: nodeChainId === MAINNET_CHAIN_ID,
    earliestBlock: range.earliestBlock, latestBlock: range.latestBlock, latencyMs, ...sample,
    rangeLimit: { lastBlock: MAINNET_LAST_PRE_MERGE_BLOCK, reason: ERA1_RANGE_REASON },
    missingBlocks: range.missingEpochs.map((epoch) => ({ fromBlock: epoch * EPOCH_BLOCKS, toBlock: (epoch + 1) * EPOCH_BLOCKS - 1 })),
    probedAt: new Date().toISOString(),
  };
}
