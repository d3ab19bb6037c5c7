import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Prefetch } from '../../../actors/sink/prefetch.js';

/** An async iterator over `batches` (sizes), ending with `end`, that counts the reads and can be held back. */
function source(batches: number[], end: string | Error) {
  let read = 0;
  let gate: Promise<void> = Promise.resolve();
  let open: () => void = () => undefined;
  return {
    get read() { return read; },
    hold() { gate = new Promise((resolve) => { open = resolve; }); },
    release() { open(); },
    iterator: {
      async next(): Promise<IteratorResult<number[], string>> {
        await gate;
        if (read < batches.length) return { done: false, value: new Array<number>(batches[read++]!).fill(0) };
        read += 1;
        if (end instanceof Error) throw end;
        return { done: true, value: end };
      },
    } as AsyncIterator<number[], string>,
  };
}

const size = (batch: number[]) => batch.length;

test('batches held are taken together in order up to the limit, at least one, then the end', async () => {
  const from = source([3, 3, 3, 5], 'reset');
  const prefetch = new Prefetch(from.iterator, size, 100);
  await new Promise((resolve) => setImmediate(resolve));
  const first = await prefetch.take(7);
  assert.deepEqual(first.kind === 'batches' && first.batches.map(size), [3, 3], 'two of 3 fit in 7; the third waits');
  const second = await prefetch.take(2);
  assert.deepEqual(second.kind === 'batches' && second.batches.map(size), [3], 'one batch is taken even above the limit');
  const third = await prefetch.take(100);
  assert.deepEqual(third.kind === 'batches' && third.batches.map(size), [5]);
  assert.deepEqual(await prefetch.take(100), { kind: 'end', value: 'reset' });
  await prefetch.close();
});

test('reading ahead stops at the capacity and resumes when batches are taken', async () => {
  const from = source([4, 4, 4, 4, 4], 'end');
  const prefetch = new Prefetch(from.iterator, size, 8);
  const first = await prefetch.take(4);
  assert.equal(first.kind === 'batches' && first.batches.length, 1);
  // Held: what the capacity allows after the first take (8 changes), and no more.
  while (from.read < 3) await new Promise((resolve) => setImmediate(resolve));
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(from.read, 3, 'two batches of 4 held, the third not read');
  await prefetch.take(8);
  while (from.read < 5) await new Promise((resolve) => setImmediate(resolve));
  await prefetch.close();
});

test('a failure of the source is thrown once the batches before it were taken; close settles with a read in flight', async () => {
  const failing = source([2], new Error('node gone'));
  const prefetch = new Prefetch(failing.iterator, size, 100);
  assert.equal((await prefetch.take(100)).kind, 'batches');
  await assert.rejects(prefetch.take(100), /node gone/);

  const slow = source([1, 1], 'end');
  slow.hold();
  const waiting = new Prefetch(slow.iterator, size, 100);
  const closing = waiting.close();
  slow.release();
  await closing;
  await assert.rejects(waiting.take(1), /closed/);
});
