import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createDevnet, devnetAccounts, generateChain, resolveDevnetConfig, resumeDepth, type DevnetResume, type DevnetStep } from '../../../net/devnet/index.js';
import { decode, encode } from '../../../runtime/codec.js';
import { bytesToHex, encodeBlock, encodeEth69Receipts } from '../../../net/eth/index.js';
import { blocksOf, runDevnet } from './run-devnet.js';

const CONFIG = { reorgEvery: 10, transactionsPerBlock: 6 };
const HEAD = 32;

function stepBytes(step: DevnetStep): string[] {
  const blocks = step.kind === 'block' ? [step] : step.blocks;
  return blocks.map((block) => `${bytesToHex(encodeBlock(block.block))}/${bytesToHex(encodeEth69Receipts(block.receipts))}`);
}

describe('devnet determinism', () => {
  it('produces byte-identical steps, reorgs included, from two generators with the same config', async () => {
    const [a, b] = await Promise.all([runDevnet(CONFIG, HEAD), runDevnet(CONFIG, HEAD)]);
    assert.ok(a.steps.some((step) => step.kind === 'reorg'));
    assert.equal(a.devnet.genesis.hash, b.devnet.genesis.hash);
    assert.deepEqual(a.steps.flatMap(stepBytes), b.steps.flatMap(stepBytes));
    assert.deepEqual(a.finalizedTrail, b.finalizedTrail);
  });

  it('produces a different chain and different accounts from a different seed', async () => {
    const a = await runDevnet({ ...CONFIG, seed: 'one' }, 3);
    const b = await runDevnet({ ...CONFIG, seed: 'two' }, 3);
    assert.notEqual(a.devnet.genesis.hash, b.devnet.genesis.hash);
    for (let n = 1; n <= 3; n++) assert.notEqual(a.canonical[n]!.hash, b.canonical[n]!.hash);
    assert.notDeepEqual(devnetAccounts('one', 4), devnetAccounts('two', 4));
  });

  it('reads an integer seed and its decimal string as the same seed', () => {
    assert.equal(createDevnet({ seed: 7 }).genesis.hash, createDevnet({ seed: '7' }).genesis.hash);
    assert.notEqual(createDevnet({ seed: 7 }).genesis.hash, createDevnet({ seed: 8 }).genesis.hash);
  });

  it('generateChain returns the final canonical chain of a stepwise run', async () => {
    const [run, chain] = await Promise.all([runDevnet(CONFIG, HEAD), generateChain(CONFIG, HEAD)]);
    assert.deepEqual(chain.map((block) => block.hash), blocksOf(run).map((block) => block.hash));
    assert.equal(chain.length, HEAD);
  });

  it('advanceTo replays a fresh generator to the same head as a running one', async () => {
    const live = await runDevnet(CONFIG, 25);
    const replay = createDevnet(CONFIG);
    await replay.advanceTo(25);
    assert.deepEqual(replay.head(), live.devnet.head());
    assert.deepEqual(replay.finalized(), live.devnet.finalized());
  });

  it('continues byte-identically, reorgs included, from the retained blocks of an earlier run stored as msgpack (a restart without replay)', async () => {
    const earlier = await runDevnet(CONFIG, 25);
    const head = earlier.devnet.head().number;
    const retain = resumeDepth(resolveDevnetConfig(CONFIG));
    const stored = Array.from({ length: retain }, (_, i) => encode(earlier.devnet.resumeRecord(head - retain + 1 + i)!));
    const resumed = createDevnet(CONFIG, stored.map((bytes) => decode(bytes)) as DevnetResume);
    assert.deepEqual(resumed.head(), earlier.devnet.head());
    assert.deepEqual(resumed.finalized(), earlier.devnet.finalized());
    const a: DevnetStep[] = [];
    const b: DevnetStep[] = [];
    for (let i = 0; i < 20; i++) a.push(await earlier.devnet.next());
    for (let i = 0; i < 20; i++) b.push(await resumed.next());
    assert.ok(a.some((step) => step.kind === 'reorg'), 'the continuation crosses a reorg');
    assert.deepEqual(b.flatMap(stepBytes), a.flatMap(stepBytes));
  });
});
