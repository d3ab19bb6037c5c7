/**
 * History sources tried in configured order per range (actors/history/source-order.ts, anchor.ts fetchProvenChunk):
 * the work's source first, then the others; a range is cut where a source's range ends (Era1 at the merge), a
 * source that fails or serves another chain is skipped for the range and the next one serves it; a request no
 * source can serve part of is refused naming the blocks and each reason; a chunk no source serves fails naming the
 * block and each source's reason, and nothing of it is recorded. Over a real store with scripted sources.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchProvenChunk } from '../../../actors/history/anchor.js';
import { checkOrderRange, rangePieces, servableEnd, sourceOrder } from '../../../actors/history/source-order.js';
import type { HistorySource } from '../../../actors/history/sources.js';
import { encodeHeader, hashHeader, type BlockHeader } from '../../../net/eth/header.js';
import { hexToBytes, type Hash } from '../../../net/eth/hex.js';
import { HistoryBlockError, type HeaderLink, type HistoryBlock } from '../../../net/history/history-block.js';
import { CodedError } from '../../../runtime/errors.js';
import { putBlockMaterial } from '../../../store/chain-material.js';
import { historyFloor, readHistoryLink } from '../../../store/history-canonical.js';
import { u64Key } from '../../../store/keys.js';
import { openStore } from '../../../store/store.js';

const ZERO = `0x${'00'.repeat(32)}` as Hash;
/** A synthetic chain's hash at `n` (`salt` picks the chain: 1 is canonical, 2 a fork). */
const h = (n: number, salt = 1) => `0x${(salt * 1_000_000 + n).toString(16).padStart(64, '0')}` as Hash;
const EMPTY_BODY = new Uint8Array([0xc3, 0xc0, 0xc0, 0xc0]);

interface Scripted extends HistorySource {
  readonly asked: Array<[number, number]>;
}

/**
 * A source serving chain `salt` up to `last` (its range limit when `limited`, else it answers an error above it),
 * or failing every request with `failure`.
 */
function scripted(id: string, options: { salt?: number; last?: number; limited?: boolean; failure?: string } = {}): Scripted {
  const salt = options.salt ?? 1;
  const last = options.last ?? Number.MAX_SAFE_INTEGER;
  const asked: Array<[number, number]> = [];
  const check = (from: number, to: number) => {
    asked.push([from, to]);
    if (options.failure) throw new HistoryBlockError(from, options.failure);
    if (to > last) throw new HistoryBlockError(last + 1, `${id} has no block above ${last}`);
  };
  const link = (n: number): HeaderLink => ({ number: n, hash: h(n, salt), parentHash: h(n - 1, salt) });
  const block = (n: number): HistoryBlock => ({ ...link(n), material: { number: n, hash: hexToBytes(h(n, salt), 32), header: new Uint8Array([0xc0]), body: EMPTY_BODY, receipts: new Uint8Array([0xc0]) } });
  return {
    id, kind: 'rpc', recordsNeeded: true, asked, transactionBlock: null, blockNumberOf: null,
    async fetchRange(from, to) {
      check(from, to);
      return Array.from({ length: to - from + 1 }, (_, i) => block(from + i));
    },
    async fetchHeaders(from, to) {
      check(from, to);
      return Array.from({ length: to - from + 1 }, (_, i) => link(from + i));
    },
    probe: async () => { throw new Error('not used'); },
    ...(options.limited ? { outOfRange: (from: number, to: number) => (to > last ? `history source '${id}' cannot serve blocks ${Math.max(from, last + 1)}-${to}: its range ends at ${last}` : null) } : {}),
  };
}

/** A store whose recorded chain starts at `lowest` (its header names h(lowest − 1) as parent). */
async function storeWithChainFrom(lowest: number) {
  const dataDir = mkdtempSync(join(tmpdir(), 'source-order-'));
  const store = openStore({ dataDir, chainId: 1 });
  const header: BlockHeader = {
    parentHash: h(lowest - 1), sha3Uncles: ZERO, miner: `0x${'00'.repeat(20)}`, stateRoot: ZERO, transactionsRoot: ZERO, receiptsRoot: ZERO,
    logsBloom: `0x${'00'.repeat(256)}`, difficulty: 0n, number: lowest, gasLimit: 30_000_000n, gasUsed: 0n, timestamp: 1_700_000_000 + lowest,
    extraData: '0x', mixHash: ZERO, nonce: '0x0000000000000000',
  };
  const hash = hexToBytes(hashHeader(header));
  await store.write(() => {
    putBlockMaterial(store, { number: lowest, hash, header: encodeHeader(header), body: EMPTY_BODY, receipts: null });
    store.chain.canonical.put(u64Key(lowest), Buffer.from(hash));
  });
  return { store, close: async () => { await store.close(); rmSync(dataDir, { recursive: true, force: true }); } };
}

const options = (skipped?: (failure: { source: string; reason: string }) => void) => ({ belowFallback: () => null, signal: new AbortController().signal, stopping: () => false, ...(skipped ? { skipped } : {}) });

test('the work\'s source comes first, then the others in configured order; a named source alone', () => {
  const sources = new Map(['a', 'b', 'c'].map((id) => [id, scripted(id)]));
  assert.deepEqual(sourceOrder(sources, 'b').map((s) => s.id), ['b', 'a', 'c']);
  assert.deepEqual(sourceOrder(sources, 'a').map((s) => s.id), ['a', 'b', 'c']);
  assert.deepEqual(sourceOrder(sources, 'gone').map((s) => s.id), ['a', 'b', 'c'], 'a source no longer configured: the configured order');
  assert.deepEqual(sourceOrder(new Map(), null), []);
  assert.deepEqual(sourceOrder(sources, 'b', true).map((s) => s.id), ['b'], 'a request that named its source: that one only');
  assert.deepEqual(sourceOrder(sources, 'gone', true), []);
});

test('a range is cut where a source\'s range ends; past it the next source alone serves it', () => {
  const era = scripted('era', { last: 100, limited: true });
  const peers = scripted('peers');
  assert.equal(servableEnd(era, 50, 500), 100);
  assert.equal(servableEnd(era, 101, 500), 100, 'cannot serve its first block');
  assert.equal(servableEnd(peers, 50, 500), 500);
  const pieces = rangePieces([era, peers], 50, 500);
  assert.deepEqual(pieces.map((p) => [p.from, p.to, p.sources.map((s) => s.id), p.refused.map((r) => r.source)]), [[50, 100, ['era', 'peers'], []], [101, 500, ['peers'], ['era']]]);
  assert.equal(pieces[1]!.refused[0]!.reason, "history source 'era' cannot serve blocks 101-500: its range ends at 100");
  assert.deepEqual(rangePieces([peers, era], 0, 10).map((p) => p.sources.map((s) => s.id)), [['peers', 'era']]);
});

test('a request is refused only for blocks no source can serve, naming them and each reason', () => {
  const era = scripted('era', { last: 100, limited: true });
  const era2 = scripted('era-mirror', { last: 80, limited: true });
  checkOrderRange([era, scripted('peers')], 0, 10_000);
  checkOrderRange([era], 0, 100);
  assert.throws(() => checkOrderRange([era2, era], 50, 150), (error: unknown) => {
    assert.ok(error instanceof CodedError);
    assert.equal(error.code, 'unsupported_capability');
    assert.equal(error.message, "no history source can serve blocks 101-150: history source 'era-mirror' cannot serve blocks 101-150: its range ends at 80; history source 'era' cannot serve blocks 101-150: its range ends at 100");
    assert.deepEqual(error.details, { fromBlock: 50, toBlock: 150, rule: 'history_source_range', sources: ['era-mirror', 'era'] });
    return true;
  });
});

test('a chunk crossing a source\'s range end is served by each in order and recorded as one proven chain', async () => {
  const { store, close } = await storeWithChainFrom(1000);
  try {
    const era = scripted('era', { last: 900, limited: true });
    const peers = scripted('peers');
    const blocks = await fetchProvenChunk(store, [era, peers], { from: 850, to: 999 }, options());
    assert.deepEqual(blocks.map((b) => b.hash), Array.from({ length: 150 }, (_, i) => h(850 + i)));
    assert.deepEqual(peers.asked.at(-1), [901, 999], 'the part past era\'s range from the peers');
    assert.deepEqual(era.asked, [[850, 900]], 'era asked only its own part (anchored by the peers\' blocks above it)');
    assert.equal(readHistoryLink(store, 850)?.hash, h(850));
    assert.equal(historyFloor(store)?.number, 850);
  } finally {
    await close();
  }
});

test('a source that fails or serves another chain is skipped for the range and the next one serves it', async () => {
  const { store, close } = await storeWithChainFrom(1000);
  try {
    const down = scripted('down', { failure: 'the upstream answered 503' });
    const fork = scripted('fork', { salt: 2 });
    const honest = scripted('honest');
    const skipped: Array<{ source: string; reason: string }> = [];
    const blocks = await fetchProvenChunk(store, [down, fork, honest], { from: 900, to: 999 }, options((failure) => skipped.push(failure)));
    assert.deepEqual(blocks.map((b) => b.hash), Array.from({ length: 100 }, (_, i) => h(900 + i)));
    assert.deepEqual(skipped.map((f) => f.source), ['down', 'fork']);
    assert.equal(skipped[0]!.reason, 'block 900: the upstream answered 503');
    assert.equal(skipped[1]!.reason, `block 999: not the canonical chain: the source's block 999 has hash ${h(999, 2)}, but the proven canonical block 1000 names parent ${h(999)}`);
  } finally {
    await close();
  }
});

test('a chunk no source serves fails naming the block and each source\'s reason; nothing of it is recorded', async () => {
  const { store, close } = await storeWithChainFrom(1000);
  try {
    const era = scripted('era', { last: 900, limited: true });
    const fork = scripted('fork', { salt: 2 });
    await assert.rejects(fetchProvenChunk(store, [era, fork], { from: 950, to: 999 }, options()), (error: unknown) => {
      assert.ok(error instanceof HistoryBlockError, String(error));
      assert.equal(error.blockNumber, 999);
      assert.match(error.reason, /^no history source served blocks 950-999: 'era': history source 'era' cannot serve blocks 950-999: its range ends at 900; 'fork': block 999: not the canonical chain/);
      return true;
    });
    assert.equal(historyFloor(store), undefined, 'nothing recorded');
    // One source only: its own error, as before.
    await assert.rejects(fetchProvenChunk(store, [scripted('down', { failure: 'refused' })], { from: 950, to: 999 }, options()), (error: unknown) => error instanceof HistoryBlockError && error.message === 'block 950: refused');
  } finally {
    await close();
  }
});
