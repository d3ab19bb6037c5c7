/** ChangeFanout writes a block's changes to a stream in one write, even past `batchChanges`. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChangeFanout, MAX_BURST_CHANGES, type FanoutSource } from '../../../api/sse/change-fanout.js';
import type { SseConnection } from '../../../api/sse/sse-connection.js';
import type { SseChunk } from '../../../api/sse/sse-encoding.js';
import { decodeChangeValue, encodeChangeValue, type StoredChange } from '../../../store/change-log.js';
import { cursorBlockNumber, encodeCursor } from '../../../store/cursor.js';

/** A log of `perBlock[i]` changes for block i + 1. */
function log(perBlock: readonly number[]): StoredChange[] {
  const changes: StoredChange[] = [];
  perBlock.forEach((count, i) => {
    for (let c = 0; c < count; c += 1) {
      const sequence = BigInt(changes.length + 1);
      const cursor = encodeCursor({ epoch: 1n, chainId: 1, instance: 'erc20@1', sequence, block: { number: i + 1, hash: `0x${(i + 1).toString(16).padStart(64, '0')}` } });
      changes.push(decodeChangeValue(sequence, encodeChangeValue('apply', cursor, `{"sequence":"${sequence}"}`)));
    }
  });
  return changes;
}

function source(changes: readonly StoredChange[]): FanoutSource & { reads: number } {
  const src = {
    reads: 0,
    read(after: bigint, limit: number) {
      src.reads += 1;
      return changes.filter((c) => c.sequence > after).slice(0, limit);
    },
    expire() { throw new Error('nothing is pruned here'); },
  };
  return src;
}

/** A stream that records each write (as the sequences of its frames). */
function connection(): { connection: SseConnection; writes: bigint[][] } {
  const writes: bigint[][] = [];
  const fake = {
    position: 0n,
    open: true,
    writable: true,
    send(chunk: SseChunk) {
      writes.push([...chunk.plain.toString('latin1').matchAll(/"sequence":"(\d+)"/g)].map((m) => BigInt(m[1]!)));
      return true;
    },
  };
  return { connection: fake as unknown as SseConnection, writes };
}

const settle = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

async function drain(fanout: ChangeFanout, total: number, stream: ReturnType<typeof connection>): Promise<void> {
  for (let turns = 0; stream.connection.position < BigInt(total) && turns < 1000; turns += 1) await settle();
  assert.equal(stream.connection.position, BigInt(total));
  fanout.close();
}

test('a block of more changes than batchChanges goes to a stream in one write; blocks are not merged past the batch', async () => {
  const changes = log([3, 25, 7, 7, 40]);
  const fanout = new ChangeFanout(source(changes), 10, {});
  const stream = connection();
  fanout.join(stream.connection);
  await drain(fanout, changes.length, stream);
  const blocksOf = (write: bigint[]) => [...new Set(write.map((s) => cursorBlockNumber(changes[Number(s) - 1]!.cursor)))];
  // 10 read → ends in block 2, completed to its end (28); then 10 (block 3 and 3 of block 4), completed to 35; then block 5 (40 changes) whole.
  assert.deepEqual(stream.writes.map((w) => w.length), [28, 14, 40]);
  assert.deepEqual(stream.writes.map(blocksOf), [[1, 2], [3, 4], [5]]);
  assert.deepEqual(stream.writes.flat(), changes.map((c) => c.sequence), 'every change once, in order');
});

test('a read shorter than the batch is written as is; a burst stops at MAX_BURST_CHANGES', async () => {
  const small = log([2, 3]);
  const fanout = new ChangeFanout(source(small), 10, {});
  const stream = connection();
  fanout.join(stream.connection);
  await drain(fanout, small.length, stream);
  assert.deepEqual(stream.writes.map((w) => w.length), [5]);

  const huge = log([MAX_BURST_CHANGES + 100]);
  const hugeFanout = new ChangeFanout(source(huge), 4096, {});
  const hugeStream = connection();
  hugeFanout.join(hugeStream.connection);
  await drain(hugeFanout, huge.length, hugeStream);
  assert.deepEqual(hugeStream.writes.map((w) => w.length), [MAX_BURST_CHANGES, 100]);
});
