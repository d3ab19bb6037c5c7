/**
 * Damaged copies of the Era1 fixture, made in a temporary directory from its bytes (the fixture is never touched),
 * each refused by net/era naming the file, the block and the check: a flipped byte in a header, in a body and in
 * the accumulator; a header rewritten (validly framed) so its hash no longer links; an uncle removed from a body;
 * forged receipts; a total difficulty off by one; roots that are not mainnet's; a file name that does not match its
 * root. A refused file is not kept: once the directory holds the good file again, it is served.
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeFrames } from '../../../net/beacon/p2p/snappy-frames.js';
import { decodeHeader, encodeHeader } from '../../../net/eth/header.js';
import { encodeRlp } from '../../../net/eth/rlp.js';
import { rawList } from '../../../net/p2p/eth-messages.js';
import { createEra1Archive } from '../../../net/era/era1-archive.js';
import { createEra1History } from '../../../net/era/era1-history.js';
import { Era1BlockError } from '../../../net/era/errors.js';
import { mainnetEpochRoots } from '../../../net/era/mainnet-epoch-roots.js';
import { decodeSnappyFramed } from '../../../net/era/snappy-framed.js';
import { blockEntry, entries, ERA1_NAME, fixtureBytes, flipped, inCopyDir, rebuilt, TYPE } from './era1-copies.js';

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => { await Promise.all(opened.splice(0).map((history) => history.close())); });

function historyOver(dir: string, epochRoots: readonly string[] = mainnetEpochRoots()) {
  const history = createEra1History({ archive: createEra1Archive({ path: dir }), epochRoots, concurrency: 2 });
  opened.push(history);
  return history;
}

/** Asking `history` for blocks `from`..`to` fails with an Era1BlockError naming `file`, `block` and a check matching `check`. */
async function refused(promise: Promise<unknown>, block: number, check: RegExp, file = ERA1_NAME): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof Era1BlockError, `expected an Era1BlockError, got ${String(error)}`);
    assert.equal(error.file, file);
    assert.equal(error.blockNumber, block);
    assert.ok(error.message.startsWith(`${file}: block ${block}: `), error.message);
    assert.match(error.check, check);
    return true;
  });
}

const bytes = fixtureBytes();
const all = entries(bytes);
/** The first block with an uncle (its body is more than `[[], []]`). */
const withUncle = all.filter((entry) => entry.type === TYPE.body).findIndex((entry) => decodeSnappyFramed(entry.data).length > 3);

test('a flipped byte in block 17\'s header entry is refused naming block 17 and its header', async () => {
  const header = blockEntry(all, 17, TYPE.header);
  await inCopyDir(flipped(bytes, header.offset + 8 + header.data.length - 3), async (dir) => {
    await refused(historyOver(dir).fetchRange(17, 17), 17, /^header: /);
    // The file is refused whole: any block of it fails, naming the damaged one.
    await refused(historyOver(dir).fetchRange(4000, 4000), 17, /^header: /);
  });
});

test('a flipped byte in a body entry is refused naming its block and its body', async () => {
  const body = blockEntry(all, withUncle, TYPE.body);
  await inCopyDir(flipped(bytes, body.offset + 8 + body.data.length - 2), async (dir) => {
    const history = historyOver(dir);
    await refused(history.fetchRange(withUncle - 1, withUncle + 1), withUncle, /^body: /);
    assert.equal((await history.fetchRange(withUncle + 1, withUncle + 1)).length, 1, 'the headers verify: the other blocks are served');
  });
});

test('a flipped byte in the accumulator entry is refused naming the block asked for and the accumulator check', async () => {
  const accumulator = all.find((entry) => entry.type === TYPE.accumulator)!;
  await inCopyDir(flipped(bytes, accumulator.offset + 8 + 5), async (dir) => {
    await refused(historyOver(dir).fetchRange(100, 120), 100, /^accumulator root mismatch: the file states 0x5ec1ffb8c3[0-9a-f]{54}, its 8192 \(block hash, total difficulty\) pairs give 0x5ec1ffb8c3b146f42606c74ced973dc16ec5a107c0345858c343fc94780b4218$/);
  });
});

test('a header rewritten and validly framed no longer links: the next block is refused for its parent hash', async () => {
  const entry = blockEntry(all, 17, TYPE.header);
  const header = decodeHeader(decodeSnappyFramed(entry.data));
  const changed = encodeFrames(encodeHeader({ ...header, extraData: '0x01' }));
  await inCopyDir(rebuilt(all, new Map([[entry, changed]])), async (dir) => {
    await refused(historyOver(dir).fetchRange(0, 10), 18, /^parent hash mismatch: the header names parent 0x[0-9a-f]{64}, block 17 hashes to 0x[0-9a-f]{64}$/);
  });
});

test('a body with its uncle removed (validly framed) is refused for its uncles hash', async () => {
  const entry = blockEntry(all, withUncle, TYPE.body);
  await inCopyDir(rebuilt(all, new Map([[entry, encodeFrames(Uint8Array.of(0xc2, 0xc0, 0xc0))]])), async (dir) => {
    await refused(historyOver(dir).fetchRange(withUncle, withUncle), withUncle, /^uncles hash mismatch \(the header says 0x[0-9a-f]{64}, the body gives 0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347\)$/);
  });
});

test('forged receipts (a legacy one and a typed one) for a block without transactions are refused by the receipts check', async () => {
  const entry = blockEntry(all, 40, TYPE.receipts);
  const legacy = encodeRlp([new Uint8Array(32).fill(7), 21_000n, new Uint8Array(256), []]);
  const typed = Uint8Array.of(0x02, ...encodeRlp([1n, 42_000n, new Uint8Array(256), []]));
  // As Era1 writes them: the legacy receipt as its RLP list, the typed one as a byte string holding type || rlp(…).
  const forged = rawList([legacy, encodeRlp(typed)]);
  await inCopyDir(rebuilt(all, new Map([[entry, encodeFrames(forged)]])), async (dir) => {
    await refused(historyOver(dir).fetchRange(40, 40), 40, /^receipt count mismatch \(the header says 0, the receipts give 2\)$/);
  });
});

test('a total difficulty that is not the previous one plus the block\'s difficulty is refused naming the block', async () => {
  const entry = blockEntry(all, 17, TYPE.totalDifficulty);
  const wrong = Buffer.from(entry.data);
  wrong[0] = wrong[0]! ^ 0x01;
  await inCopyDir(rebuilt(all, new Map([[entry, wrong]])), async (dir) => {
    await refused(historyOver(dir).fetchRange(17, 17), 17, /^total difficulty mismatch: the file says \d+, block 16's total plus this block's difficulty is \d+$/);
  });
});

test('a file consistent in itself whose root is not the shipped one for its epoch is refused as not mainnet\'s', async () => {
  await inCopyDir(bytes, async (dir) => {
    await refused(historyOver(dir, [`0x${'11'.repeat(32)}`]).fetchRange(3, 3), 3, /^accumulator root mismatch: 0x5ec1ffb8c3b146f42606c74ced973dc16ec5a107c0345858c343fc94780b4218 is not mainnet's epoch 0 root 0x1{64} \(net\/era\/mainnet-epoch-roots\.txt\): not mainnet's canonical blocks$/);
  });
});

test('a file whose name does not carry its root\'s first bytes is refused', async () => {
  await inCopyDir(bytes, async (dir) => {
    await refused(historyOver(dir).fetchRange(3, 3), 3, /^the file name says accumulator root deadbeef…, the file's blocks give 0x5ec1ffb8/, 'mainnet-00000-deadbeef.era1');
  }, 'mainnet-00000-deadbeef.era1');
});

test('a refused file is not kept: once the directory holds the good file, its blocks are served', async () => {
  const header = blockEntry(all, 17, TYPE.header);
  await inCopyDir(flipped(bytes, header.offset + 8 + header.data.length - 3), async (dir) => {
    const history = historyOver(dir);
    await refused(history.fetchRange(17, 17), 17, /^header: /);
    writeFileSync(join(dir, ERA1_NAME), bytes);
    assert.equal((await history.fetchRange(17, 17))[0]!.number, 17);
  });
});
