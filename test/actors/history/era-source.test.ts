/**
 * The `era` history source through its public interface (actors/history/sources.ts `createHistorySource`), over the
 * Era1 fixture and a real store: the probe (range, the merge as its limit, a verified sample, valid against the
 * OpenAPI document); on a mainnet node its blocks are proven canonical by the accumulator, so a chunk is recorded
 * with its links below a recorded chain far above without walking headers, and on-demand JSON-RPC history fills
 * from it the same way; on another chain it proves nothing and the walk fails; requests past the merge are refused
 * when made. A real node process cannot follow mainnet here (the test chains are the devnet and anvil), so this is
 * the end-to-end path the history lane takes, minus the lane's mailbox.
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHistorySource, type HistorySource, type HistorySourceArgs } from '../../../actors/history/sources.js';
import { anchorDown, fetchProvenChunk, historyRecorded, provenHash } from '../../../actors/history/anchor.js';
import { fill, type OnDemandDeps } from '../../../actors/history/on-demand.js';
import { checkOrderRange } from '../../../actors/history/source-order.js';
import { encodeHeader, hashHeader, type BlockHeader } from '../../../net/eth/header.js';
import { hexToBytes, type Hash } from '../../../net/eth/hex.js';
import { HistoryBlockError, type HeaderLink } from '../../../net/history/history-block.js';
import { CodedError } from '../../../runtime/errors.js';
import { getBodyBytes, getHeaderBytes, getReceiptsBytes, putBlockMaterial } from '../../../store/chain-material.js';
import { readHistoryLink } from '../../../store/history-canonical.js';
import { u64Key } from '../../../store/keys.js';
import { openStore, type Store } from '../../../store/store.js';
import { OpenApiValidator } from '../../support/openapi-validator.js';
import { ERA1_DIR, GENESIS_HASH } from '../../net/era/era1-copies.js';

const ZERO = `0x${'00'.repeat(32)}` as Hash;
const signal = new AbortController().signal;

const sources: HistorySource[] = [];
afterEach(async () => { await Promise.all(sources.splice(0).map((source) => source.close?.())); });

/** The era source over the fixture's directory, for a node of chain `chainId` (closed after the test). */
function eraSourceFor(store: Store, chainId: number): HistorySource {
  const source = createHistorySource(eraArgs(), store, { signal, chainId });
  sources.push(source);
  return source;
}

function eraArgs(): HistorySourceArgs {
  return {
    id: 'era1', kind: 'era', concurrency: 2, url: '', path: ERA1_DIR, batchBlocks: 16, requestTimeoutMs: 10_000, maxRetries: 3,
    backoffInitialMs: 200, backoffMaxMs: 10_000, pooledBlobRoots: false, encoding: 'auto',
  };
}

/** A store whose recorded chain is one synthetic block at `lowest` (a node that followed mainnet far above Era1). */
async function storeWithChainAt(lowest: number): Promise<{ store: Store; close(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cdn-era-source-'));
  const store = openStore({ dataDir, chainId: 1 });
  const header: BlockHeader = {
    parentHash: ZERO, sha3Uncles: ZERO, miner: `0x${'00'.repeat(20)}`, stateRoot: ZERO, transactionsRoot: ZERO, receiptsRoot: ZERO,
    logsBloom: `0x${'00'.repeat(256)}`, difficulty: 0n, number: lowest, gasLimit: 30_000_000n, gasUsed: 0n, timestamp: 1_700_000_000, extraData: '0x', mixHash: ZERO,
    nonce: '0x0000000000000000',
  };
  const hash = hexToBytes(hashHeader(header));
  await store.write(() => {
    putBlockMaterial(store, { number: lowest, hash, header: encodeHeader(header), body: Uint8Array.of(0xc3, 0xc0, 0xc0, 0xc0), receipts: null });
    store.chain.canonical.put(u64Key(lowest), Buffer.from(hash));
  });
  return { store, async close() { await store.close(); rmSync(dataDir, { recursive: true, force: true }); } };
}

/** The source with its header walks counted (a self-proving source never needs one). */
function counted(source: HistorySource): HistorySource & { headerRequests: Array<[number, number]> } {
  const headerRequests: Array<[number, number]> = [];
  return Object.assign(Object.create(source) as HistorySource, {
    headerRequests,
    fetchHeaders: (from: number, to: number): Promise<HeaderLink[]> => {
      headerRequests.push([from, to]);
      return source.fetchHeaders(from, to);
    },
  });
}

test('the probe reports the archive\'s range, the merge as its limit, a verified sample (block 0, mainnet\'s genesis) and chain id 1; it validates against the OpenAPI document', async () => {
  const { store, close } = await storeWithChainAt(20_000_000);
  try {
    const source = eraSourceFor(store, 1);
    const probe = await source.probe(1);
    assert.deepEqual({ ...probe, latencyMs: 0, probedAt: '' }, {
      source: 'era1', kind: 'era', chainId: 1, chainIdMatches: true, earliestBlock: 0, latestBlock: 8191, latencyMs: 0, receiptsAvailable: true,
      sampleBlock: { number: 0, hash: GENESIS_HASH, verified: true }, sampleError: null,
      rangeLimit: { lastBlock: 15_537_393, reason: 'Era1 files hold the pre-merge chain only: blocks 0 to 15537393 (the last proof-of-work block)' },
      missingBlocks: [], probedAt: '',
    });
    const check = new OpenApiValidator().check('POST', '/admin/v1/sources/era1/probe', 200, 'application/json', JSON.stringify(probe));
    assert.deepEqual(check.problems, []);
    assert.equal((await source.probe(1337)).chainIdMatches, false, 'a node on another chain is told the source is mainnet\'s');
  } finally {
    await close();
  }
});

test('on a mainnet node a chunk is proven by the accumulator: recorded with its links below a recorded chain at 20,000,000, no header walked', async () => {
  const { store, close } = await storeWithChainAt(20_000_000);
  try {
    const source = counted(eraSourceFor(store, 1));
    assert.equal(typeof source.canonicalLink, 'function');
    const refs = await fetchProvenChunk(store, [source], { from: 7936, to: 8191 }, { belowFallback: () => null, signal, stopping: () => false });
    assert.equal(refs.length, 256);
    assert.deepEqual(source.headerRequests, [], 'no header walk from block 20,000,000 down');
    assert.deepEqual(historyRecorded(store, 7936, 8191), refs, 'material and proven links recorded: a second job needs nothing from the source');
    const top = refs.at(-1)!;
    assert.equal(readHistoryLink(store, 8191)?.hash, top.hash);
    const key = hexToBytes(top.hash);
    assert.ok(getHeaderBytes(store, key, 8191) && getBodyBytes(store, key, 8191) && getReceiptsBytes(store, key, 8191));
    // The chunk below links to the proven one by parent hash, as any chunk does.
    const below = await fetchProvenChunk(store, [source], { from: 7680, to: 7935 }, { belowFallback: () => null, signal, stopping: () => false });
    assert.equal(below.length, 256);
    assert.equal(provenHash(store, 7935), below.at(-1)!.hash);
  } finally {
    await close();
  }
});

test('on-demand JSON-RPC history fills blocks of an Era1 file on a mainnet node (proven by the accumulator, recorded with their links)', async () => {
  const { store, close } = await storeWithChainAt(20_000_000);
  try {
    const source = counted(eraSourceFor(store, 1));
    const deps: OnDemandDeps = { store, sources: new Map([['era1', source]]), shutdown: signal, chunkBlocks: 64, args: { source: 'era1', maxBlocks: 1000, timeoutMs: 60_000 } };
    await fill(deps, 0, 99, signal);
    assert.equal(readHistoryLink(store, 0)?.hash, GENESIS_HASH);
    assert.equal(historyRecorded(store, 0, 99)?.length, 100);
    assert.deepEqual(source.headerRequests, []);
  } finally {
    await close();
  }
});

test('on a node of another chain the Era1 accumulator proves nothing: anchoring walks headers from the recorded chain and fails past the merge', async () => {
  const { store, close } = await storeWithChainAt(20_000_000);
  try {
    const source = eraSourceFor(store, 1337);
    assert.equal(source.canonicalLink, undefined);
    await assert.rejects(anchorDown(store, source, 100, signal), (error: unknown) => {
      assert.ok(error instanceof HistoryBlockError);
      assert.match(error.message, /past the merge: Era1 files hold the pre-merge chain only/);
      return true;
    });
  } finally {
    await close();
  }
});

test('requests past the merge are refused when made (a job or subscription over them), naming the source and the blocks', async () => {
  const { store, close } = await storeWithChainAt(20_000_000);
  try {
    const source = eraSourceFor(store, 1);
    assert.equal(source.outOfRange!(0, 15_537_393), null);
    assert.throws(() => checkOrderRange([source], 15_000_000, 16_000_000), (error: unknown) => {
      assert.ok(error instanceof CodedError);
      assert.equal(error.code, 'unsupported_capability');
      assert.equal(error.message, "history source 'era1' (kind era) cannot serve blocks 15537394-16000000: Era1 files hold the pre-merge chain only: blocks 0 to 15537393 (the last proof-of-work block)");
      assert.deepEqual(error.details, { fromBlock: 15_000_000, toBlock: 16_000_000, rule: 'history_source_range', sources: ['era1'] });
      return true;
    });
    assert.equal(source.transactionBlock, null, 'Era1 files have no hash index: no locator');
  } finally {
    await close();
  }
});
