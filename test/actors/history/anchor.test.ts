/**
 * Anchoring below the recorded chain (actors/history/anchor.ts) over a real store and a scripted source: the header
 * walk proves hashes down from the lowest canonical block and persists them batch by batch; a source serving another
 * chain fails at the first header that does not link, naming it; a later walk resumes from the proven floor, and
 * headers the store holds are used without asking the source.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { anchorDown, checkProven, provenHash, trustedHash } from '../../../actors/history/anchor.js';
import { startOnDemand, type FilledMessage, type OnDemandDeps } from '../../../actors/history/on-demand.js';
import type { ActorContext } from '../../../runtime/actor.js';
import type { HistorySource } from '../../../actors/history/sources.js';
import { encodeHeader, hashHeader, type BlockHeader } from '../../../net/eth/header.js';
import { hexToBytes, type Hash } from '../../../net/eth/hex.js';
import { HistoryBlockError, type HeaderLink, type HistoryBlock } from '../../../net/history/history-block.js';
import { putBlockMaterial } from '../../../store/chain-material.js';
import { openStore } from '../../../store/store.js';
import { historyFloor, readHistoryLink } from '../../../store/history-canonical.js';
import { u64Key } from '../../../store/keys.js';

const ZERO = `0x${'00'.repeat(32)}` as Hash;
/** A synthetic chain's hash at `n` (`salt` picks the chain). */
const h = (n: number, salt = 1) => `0x${(salt * 1_000_000 + n).toString(16).padStart(64, '0')}` as Hash;

function header(number: number, parentHash: Hash): BlockHeader {
  return {
    parentHash, sha3Uncles: ZERO, miner: `0x${'00'.repeat(20)}`, stateRoot: ZERO, transactionsRoot: ZERO, receiptsRoot: ZERO,
    logsBloom: `0x${'00'.repeat(256)}`, difficulty: 0n, number, gasLimit: 30_000_000n, gasUsed: 0n, timestamp: 1_700_000_000 + number,
    extraData: '0x', mixHash: ZERO, nonce: '0x0000000000000000',
  };
}

/** A source serving headers of the chain h(·, salt), counting the header requests it answers. */
function source(salt: number): HistorySource & { requests: Array<[number, number]> } {
  const requests: Array<[number, number]> = [];
  const link = (n: number): HeaderLink => ({ number: n, hash: h(n, salt), parentHash: h(n - 1, salt) });
  return {
    id: 'scripted', kind: 'rpc', recordsNeeded: true, requests, transactionBlock: null, blockNumberOf: null,
    fetchRange: async () => { throw new Error('not used'); },
    async fetchHeaders(from, to) {
      requests.push([from, to]);
      return Array.from({ length: to - from + 1 }, (_, i) => link(from + i));
    },
    probe: async () => { throw new Error('not used'); },
  };
}

function storeWithChainFrom(lowest: number) {
  const dataDir = mkdtempSync(join(tmpdir(), 'anchor-'));
  const store = openStore({ dataDir, chainId: 1 });
  // The recorded chain: its lowest block names h(lowest - 1) as parent.
  const bytes = encodeHeader(header(lowest, h(lowest - 1)));
  const hash = hexToBytes(hashHeader(header(lowest, h(lowest - 1))));
  return {
    store, hash,
    async init() {
      await store.write(() => {
        putBlockMaterial(store, { number: lowest, hash, header: bytes, body: new Uint8Array([0xc3, 0xc0, 0xc0, 0xc0]), receipts: null });
        store.chain.canonical.put(u64Key(lowest), Buffer.from(hash));
      });
    },
    async close() { await store.close(); rmSync(dataDir, { recursive: true, force: true }); },
  };
}

test('the walk proves hashes down from the recorded chain, persists them, and resumes from the proven floor', async () => {
  const fixture = storeWithChainFrom(1000);
  await fixture.init();
  const { store } = fixture;
  try {
    const honest = source(1);
    assert.equal(provenHash(store, 999), h(999), 'the block right below the recorded chain is named by its parent hash');
    assert.equal(trustedHash(store, 700), null);
    assert.equal(await anchorDown(store, honest, 700), h(700));
    assert.deepEqual(honest.requests, [[744, 999], [700, 743]], 'batches of 256 headers, top down');
    assert.equal(historyFloor(store)?.number, 700);
    assert.equal(readHistoryLink(store, 850)?.hash, h(850));
    assert.equal(readHistoryLink(store, 850)?.parentHash, h(849));
    // Already proven: nothing asked.
    assert.equal(await anchorDown(store, honest, 800), h(800));
    assert.equal(honest.requests.length, 2);
    // Lower: from the floor only.
    assert.equal(await anchorDown(store, honest, 650), h(650));
    assert.deepEqual(honest.requests.at(-1), [650, 699]);
    // A chunk must end in the proven hash.
    const block = (n: number, salt = 1): HistoryBlock => ({ number: n, hash: h(n, salt), parentHash: h(n - 1, salt), material: { number: n, hash: new Uint8Array(32), header: new Uint8Array(), body: new Uint8Array(), receipts: null } });
    checkProven(store, [block(660), block(661)]);
    assert.throws(() => checkProven(store, [block(660, 2), block(661, 2)]), (error: unknown) => error instanceof HistoryBlockError && error.blockNumber === 661 && /not the canonical chain/.test(error.reason));
  } finally {
    await fixture.close();
  }
});

test('a source serving another chain fails at the first header that does not link, naming it; nothing of it is kept', async () => {
  const fixture = storeWithChainFrom(500);
  await fixture.init();
  const { store } = fixture;
  try {
    await assert.rejects(anchorDown(store, source(2), 400), (error: unknown) => error instanceof HistoryBlockError && error.blockNumber === 499
      && error.reason === `not the canonical chain: the source's block 499 has hash ${h(499, 2)}, but the proven canonical block 500 names parent ${h(499)}`);
    assert.equal(historyFloor(store), undefined, 'no link of the forked chain was written');
    // The honest source then proves the same range.
    assert.equal(await anchorDown(store, source(1), 400), h(400));
  } finally {
    await fixture.close();
  }
});

test('with nothing recorded there is nothing to anchor to', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'anchor-'));
  const store = openStore({ dataDir, chainId: 1 });
  try {
    await assert.rejects(anchorDown(store, source(1), 5), /nothing to anchor history to/);
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/** Runs one on-demand request through startOnDemand and returns the reply it sends back. */
function onDemand(deps: OnDemandDeps, message: Parameters<typeof startOnDemand>[2]): Promise<FilledMessage> {
  return new Promise((resolve) => {
    const ctx = { log: { info() {}, warn() {} }, send: async (to: string, reply: unknown) => { assert.equal(to, 'rpc.0'); resolve(reply as FilledMessage); } };
    startOnDemand(ctx as unknown as ActorContext<unknown>, deps, message, 'rpc.0');
  });
}

test('on-demand requests answer at their deadline even when the source hangs, refuse a range over the maximum, and need a source', async () => {
  const fixture = storeWithChainFrom(300);
  await fixture.init();
  const { store } = fixture;
  try {
    const hanging: HistorySource = { ...source(1), fetchHeaders: () => new Promise(() => {}) };
    const deps = (overrides: Partial<OnDemandDeps['args']> = {}): OnDemandDeps => ({
      store, sources: new Map([['archive', hanging]]), shutdown: new AbortController().signal, chunkBlocks: 8,
      args: { source: 'archive', maxBlocks: 20, timeoutMs: 100, ...overrides },
    });
    const started = performance.now();
    assert.deepEqual(await onDemand(deps(), { type: 'rpc.fill', id: 1, from: 100, to: 110 }), {
      type: 'history.filled', id: 1, error: { code: 'source_unavailable', message: 'on-demand history did not finish within 0.1 s' },
    });
    assert.ok(performance.now() - started < 5_000);
    const wide = await onDemand(deps(), { type: 'rpc.fill', id: 2, from: 100, to: 150 });
    assert.equal(wide.error?.code, 'query_too_expensive');
    assert.match(wide.error!.message, /covers 51 blocks; this node fetches at most 20/);
    const off = await onDemand(deps({ source: null }), { type: 'rpc.fill', id: 3, from: 100, to: 101 });
    assert.equal(off.error?.code, 'unsupported_capability');
    // At or above the recorded chain there is nothing to fetch.
    assert.deepEqual(await onDemand(deps(), { type: 'rpc.fill', id: 4, from: 300, to: 305 }), { type: 'history.filled', id: 4, error: null });
  } finally {
    await fixture.close();
  }
});

test('a self-proving source\'s link starts a run of its own, and a later walk starts from the lowest proven link above its target', async () => {
  const fixture = storeWithChainFrom(1000);
  await fixture.init();
  const { store } = fixture;
  try {
    // A source that proves canonicality itself (kind era on mainnet) answers the link at the target: no walk.
    const selfProving: HistorySource & { requests: Array<[number, number]> } = { ...source(1), canonicalLink: async (n: number) => ({ number: n, hash: h(n), parentHash: h(n - 1) }) };
    assert.equal(await anchorDown(store, selfProving, 500), h(500));
    assert.deepEqual(selfProving.requests, []);
    assert.deepEqual(readHistoryLink(store, 500), { number: 500, hash: h(500), parentHash: h(499) });
    assert.equal(readHistoryLink(store, 700), undefined, 'nothing between it and the recorded chain is claimed');
    // A walking source proves 400 from the link at 500, not from the recorded chain at 1000.
    const walking = source(1);
    assert.equal(await anchorDown(store, walking, 400), h(400));
    assert.deepEqual(walking.requests, [[400, 499]]);
    // And 700 from the recorded chain down (the lowest link above 700 is none: the chain's lowest block).
    assert.equal(await anchorDown(store, walking, 700), h(700));
    assert.deepEqual(walking.requests.slice(1), [[744, 999], [700, 743]]);
  } finally {
    await fixture.close();
  }
});
