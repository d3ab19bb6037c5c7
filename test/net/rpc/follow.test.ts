import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeBlockBody } from '../../../net/eth/block.js';
import { decodeHeader } from '../../../net/eth/header.js';
import { bytesToHex, type Hash } from '../../../net/eth/hex.js';
import { keccak256 } from '../../../net/eth/keccak.js';
import { decodeEth69Receipts } from '../../../net/eth/receipt.js';
import { createRpcClient, type RpcClient } from '../../../net/rpc/client.js';
import { ReorgTooDeepError, UpstreamError } from '../../../net/rpc/errors.js';
import { fetchFinalized, firstFollowedNumber, follow, type FollowedBlock, type FollowResult } from '../../../net/rpc/follow.js';
import type { BlockRef } from '../../../store/chain-types.js';
import { subscribeNewHeads } from '../../../net/rpc/new-heads.js';
import { startAnvil, type Anvil } from '../../support/anvil.js';
import { freePort } from '../../support/ports.js';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.js';

const SENDER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const RECIPIENT = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';

/** The block's hash, checked against its stored hash and header bytes (and its number and parent against the header). */
const hashOf = (block: FollowedBlock): Hash => {
  assert.equal(bytesToHex(block.material.hash), block.hash);
  assert.equal(bytesToHex(keccak256(block.material.header)), block.hash);
  const header = decodeHeader(block.material.header);
  assert.equal(header.number, block.number);
  assert.equal(block.material.number, block.number);
  assert.equal(header.parentHash, block.parentHash);
  return block.hash;
};
const numbers = (result: FollowResult): number[] => result.branch.map((block) => block.number);
/** The stored body's transactions and the stored receipts, decoded. */
const transactionsOf = (block: FollowedBlock) => decodeBlockBody(block.material.body).transactions;
const receiptsOf = (block: FollowedBlock) => decodeEth69Receipts(block.material.receipts!);

describe('follow() walks an anvil chain by parent hash, across reorganisations', () => {
  let anvil: Anvil;
  let client: RpcClient;
  /** What a store would hold: verified blocks by hash, and the canonical chain the chain lane would make of them. */
  const recorded = new Map<Hash, number>();
  const canonical = new Map<number, Hash>();
  let localHead: BlockRef | null = null;
  const base = (): BlockRef | null => {
    const number = Math.min(...canonical.keys());
    return Number.isFinite(number) ? { number, hash: canonical.get(number)! } : null;
  };

  const step = async (options: { maxReorgDepth?: number; maxBlocks?: number } = {}): Promise<FollowResult> => {
    const result = await follow({
      client, localHead, base: base(), maxReorgDepth: options.maxReorgDepth ?? 8, maxBlocks: options.maxBlocks,
      isKnown: (hash) => recorded.has(hash), canonicalHash: (number) => canonical.get(number),
    });
    for (const block of result.branch) {
      recorded.set(hashOf(block), block.number);
      canonical.set(block.number, block.hash);
    }
    for (const number of canonical.keys()) if (number > result.head.number) canonical.delete(number);
    localHead = result.head;
    return result;
  };
  const transferAndMine = async (blocks: number) => {
    await anvil.rpc('evm_setAutomine', [false]);
    for (let i = 0; i < 3; i += 1) await anvil.rpc('eth_sendTransaction', [{ from: SENDER, to: RECIPIENT, value: '0x1' }]);
    const head = await anvil.mine(blocks);
    await anvil.rpc('evm_setAutomine', [true]);
    return head;
  };
  const hashAt = async (number: number): Promise<Hash> => (await anvil.rpc<{ hash: Hash }>('eth_getBlockByNumber', [`0x${number.toString(16)}`, false])).hash;

  before(async () => {
    anvil = await startAnvil();
    client = createRpcClient({ url: anvil.url, timeoutMs: 5000, maxRetries: 2, backoffInitialMs: 10, backoffMaxMs: 100 });
  });
  after(async () => {
    await anvil?.stop();
  });

  it('with nothing recorded it starts maxReorgDepth below the upstream head (anvil has no finalized block that high), then catches up', async () => {
    const head = await transferAndMine(12);
    const first = await step();
    assert.deepEqual(numbers(first), [head - 8]);
    assert.equal(first.head.hash, await hashAt(head - 8));
    assert.equal(first.reorged, false);
    assert.equal(first.behind, true, 'the head is still to come');
    const rest = await step();
    assert.deepEqual(numbers(rest), Array.from({ length: 8 }, (_, i) => head - 7 + i));
    assert.equal(rest.branch[0]!.parentHash, first.head.hash);
    assert.equal(rest.reorged, false);
    assert.equal(rest.behind, false);
  });

  it('new blocks come back oldest first, verified, each the parent of the next, attached to the previous head', async () => {
    const previous = localHead!;
    const head = await transferAndMine(3);
    const result = await step();
    assert.deepEqual(numbers(result), [previous.number + 1, previous.number + 2, head]);
    assert.equal(result.branch[0]!.parentHash, previous.hash);
    for (let i = 1; i < result.branch.length; i += 1) assert.equal(result.branch[i]!.parentHash, hashOf(result.branch[i - 1]!));
    assert.equal(transactionsOf(result.branch[0]!).length, 3, 'the transfers are in the first new block');
    assert.equal(receiptsOf(result.branch[0]!).length, 3);
    assert.equal(result.reorged, false);
  });

  it('a poll with nothing new fetches no block and keeps the head', async () => {
    const previous = localHead!;
    const result = await step();
    assert.deepEqual(result.branch, []);
    assert.deepEqual(result.head, previous);
    assert.equal(result.reorged, false);
  });

  it('after anvil_reorg the replacement branch starts right after the common ancestor', async () => {
    const head = await transferAndMine(4);
    assert.equal(transactionsOf((await step()).branch[0]!).length, 3, 'the first block of the doomed branch has transactions');
    const ancestor = await hashAt(head - 4);
    const replaced = await Promise.all([head - 3, head - 2, head - 1, head].map(hashAt));
    await anvil.rpc('anvil_reorg', [4, []]);
    const result = await step();
    assert.deepEqual(numbers(result), [head - 3, head - 2, head - 1, head]);
    assert.equal(result.branch[0]!.parentHash, ancestor, 'attached to the common ancestor');
    for (const [i, block] of result.branch.entries()) assert.notEqual(hashOf(block), replaced[i], `block ${block.number} was replaced`);
    assert.equal(result.head.hash, await hashAt(head));
    assert.equal(result.reorged, true);
  });

  it('a reorganisation deeper than the maximum throws ReorgTooDeepError and yields nothing; at the maximum it is followed', async () => {
    const head = (await step()).head.number;
    await anvil.rpc('anvil_reorg', [5, []]);
    const before = recorded.size;
    await assert.rejects(step({ maxReorgDepth: 4 }), (error: unknown) => {
      assert.ok(error instanceof ReorgTooDeepError, String(error));
      assert.equal(error.maxReorgDepth, 4);
      assert.equal(error.localHead.number, head);
      assert.deepEqual(error.fork, { at: { number: head - 5, hash: canonical.get(head - 5) } }, 'the fork point found among the recorded blocks');
      assert.equal(error.depth, 5, 'the real depth, not the limit');
      assert.match(error.message, new RegExp(`forks at block ${head - 5} \\(0x[0-9a-f]{64}\\), 5 blocks below the followed head ${head}`));
      assert.match(error.message, /max_reorg_depth = 4/);
      assert.match(error.message, /Nothing was recorded/);
      return true;
    });
    assert.equal(recorded.size, before, 'nothing recorded');
    const result = await step({ maxReorgDepth: 5 });
    assert.deepEqual(numbers(result), [head - 4, head - 3, head - 2, head - 1, head]);
  });

  it('a source far behind catches up in bounded batches', async () => {
    const start = localHead!.number;
    const head = await transferAndMine(10);
    const followed: number[] = [];
    for (let calls = 1; ; calls += 1) {
      const result = await step({ maxBlocks: 4 });
      assert.ok(result.branch.length <= 4);
      followed.push(...numbers(result));
      if (!result.behind) break;
      assert.ok(calls < 5, 'catches up in three batches');
    }
    assert.deepEqual(followed, Array.from({ length: head - start }, (_, i) => start + 1 + i));
  });

  it('an upstream that steps back to a recorded block moves the head back without fetching anything', async () => {
    const snapshot = await anvil.rpc<string>('evm_snapshot');
    const back = localHead!;
    await transferAndMine(2);
    await step();
    await anvil.rpc('evm_revert', [snapshot]);
    const result = await step();
    assert.deepEqual(result.branch, []);
    assert.deepEqual(result.head, back);
    assert.equal(result.reorged, true);
  });

  it('fetchFinalized gives the upstream\'s finalized block', async () => {
    await anvil.mine(70);
    const finalized = await anvil.rpc<{ number: string; hash: Hash }>('eth_getBlockByNumber', ['finalized', false]);
    assert.deepEqual(await fetchFinalized(client), { number: Number(finalized.number), hash: finalized.hash });
    assert.ok(Number(finalized.number) > 0, 'anvil finalizes head - 64');
  });

  describe('a chain recorded from an unfinalized block the upstream abandons', () => {
    let fresh: Anvil;
    let freshClient: RpcClient;
    const blocks = new Map<Hash, number>();
    before(async () => {
      fresh = await startAnvil();
      freshClient = createRpcClient({ url: fresh.url, timeoutMs: 5000, maxRetries: 2, backoffInitialMs: 10, backoffMaxMs: 100 });
    });
    after(async () => {
      await fresh?.stop();
    });
    const freshHash = async (number: number): Promise<Hash> => (await fresh.rpc<{ hash: Hash }>('eth_getBlockByNumber', [`0x${number.toString(16)}`, false])).hash;

    it('a store that began at the upstream head (as earlier versions did) is replaced from that block up when it is reorganised away', async () => {
      const head = await fresh.mine(20);
      // What an earlier version recorded: the head alone, as the chain's first block.
      const began: BlockRef = { number: head, hash: await freshHash(head) };
      blocks.set(began.hash, head);
      await fresh.rpc('anvil_reorg', [3, []]);
      const newHead = await fresh.mine(1);
      const result = await follow({
        client: freshClient, localHead: began, base: began, maxReorgDepth: 64, isKnown: (hash) => blocks.has(hash),
        canonicalHash: (number) => (number === head ? began.hash : undefined),
      });
      assert.deepEqual(numbers(result), [head, newHead], 'from the first recorded block up, nothing below it');
      assert.notEqual(result.branch[0]!.hash, began.hash);
      assert.equal(result.branch[0]!.parentHash, await freshHash(head - 1));
      assert.equal(result.reorged, true);
    });

    it('a replacement deeper than the limit is refused, saying the branch shares no recorded block', async () => {
      const head = await fresh.mine(3);
      const began: BlockRef = { number: head - 2, hash: await freshHash(head - 2) };
      const recordedHashes = new Map<number, Hash>();
      for (let n = head - 2; n <= head; n += 1) recordedHashes.set(n, await freshHash(n));
      const known = new Set(recordedHashes.values());
      await fresh.rpc('anvil_reorg', [4, []]);
      await assert.rejects(follow({
        client: freshClient, localHead: { number: head, hash: recordedHashes.get(head)! }, base: began, maxReorgDepth: 2,
        isKnown: (hash) => known.has(hash), canonicalHash: (number) => recordedHashes.get(number),
      }), (error: unknown) => {
        assert.ok(error instanceof ReorgTooDeepError, String(error));
        assert.deepEqual(error.fork, { below: head - 2 });
        assert.equal(error.depth, 3, 'at least the whole recorded chain');
        assert.match(error.message, new RegExp(`shares no block with the recorded chain, which begins at block ${head - 2}: it forks below it, at least 3 blocks below the followed head ${head}`));
        return true;
      });
    });

    it('the first block followed is the finalized block or maxReorgDepth below the head, whichever is higher', () => {
      assert.equal(firstFollowedNumber(100, null, 64), 36);
      assert.equal(firstFollowedNumber(100, 90, 64), 90);
      assert.equal(firstFollowedNumber(100, 10, 64), 36);
      assert.equal(firstFollowedNumber(5, null, 64), 0);
      assert.equal(firstFollowedNumber(5, 7, 64), 5, 'never above the head');
    });
  });

  describe('finality and wake-ups through other upstream answers', () => {
    let front: FakeUpstream;
    before(async () => {
      front = await startFakeUpstream(anvil.url);
    });
    after(async () => {
      await front?.close();
    });

    it('fetchFinalized is null when the upstream has no finalized block yet, and fails on other errors', async () => {
      const viaFront = createRpcClient({ url: front.url, timeoutMs: 2000, maxRetries: 0, backoffInitialMs: 5, backoffMaxMs: 5 });
      front.script({ result: null });
      assert.equal(await fetchFinalized(viaFront), null);
      front.script({ error: { code: -39001, message: 'finalized block not found' } });
      assert.equal(await fetchFinalized(viaFront), null);
      front.script({ error: { code: -32005, message: 'rate limit exceeded' } });
      await assert.rejects(fetchFinalized(viaFront), (error: unknown) => error instanceof UpstreamError && error.code === -32005);
    });

    it('a newHeads subscription wakes the follower on every mined block', async () => {
      let heads = 0;
      const errors: Error[] = [];
      const subscription = subscribeNewHeads({
        url: anvil.wsUrl, onHead: () => { heads += 1; }, onError: (error) => errors.push(error),
        reconnect: { initialMs: 10, maxMs: 100 }, handshakeTimeoutMs: 2000,
      });
      try {
        await waitFor(async () => {
          await anvil.mine();
          return heads > 0;
        }, 'a newHeads notification');
        assert.deepEqual(errors, []);
      } finally {
        subscription.close();
      }
    });

    it('a newHeads endpoint that is down reports errors and keeps reconnecting until closed', async () => {
      const port = await freePort();
      const errors: UpstreamError[] = [];
      const subscription = subscribeNewHeads({
        url: `ws://user:secret@127.0.0.1:${port}`, onHead: () => undefined, onError: (error) => errors.push(error),
        reconnect: { initialMs: 10, maxMs: 20 }, handshakeTimeoutMs: 500,
      });
      try {
        await waitFor(async () => errors.length >= 3, 'three failed connection attempts');
        assert.equal(errors[0]!.failure, 'transport');
        assert.ok(errors.every((error) => !error.message.includes('secret')));
      } finally {
        subscription.close();
      }
      const seen = errors.length;
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.ok(errors.length <= seen + 1, 'no reconnection after close');
    });
  });
});

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
