import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { once } from 'node:events';
import { deliveredPage } from '../../../api/aggregate/consumers/consumer-page.js';
import { pageBytes } from '../../../api/aggregate/json-body.js';
import { encodeChangeValue, putChange, readChanges } from '../../../store/change-log.js';
import { openStore } from '../../../store/store.js';

const closing = (coverage: unknown) => (lastCursor: string | null) =>
  `],"nextCursor":${JSON.stringify(lastCursor)},"coverage":${JSON.stringify(coverage)},"consumer":{"id":"c"}}`;

/** What the route answered before it wrote pages in place: the Page bytes with the consumer spliced in. */
function reference(rows: string[], nextCursor: string | null, coverage: unknown): string {
  const page = pageBytes(rows.map((row) => Buffer.from(row)), nextCursor, coverage);
  return `${page.subarray(0, page.length - 1).toString()},"consumer":{"id":"c"}}`;
}

test('a consumer page is the Page of the delivered envelopes, byte for byte, and valid JSON', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cdn-consumer-page-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const store = openStore({ dataDir, chainId: 1 });
  try {
    const { changes } = store.processor('blobs');
    const log = { changes, epoch: store.epoch, chainId: 1, instance: 'blobs' };
    // Envelopes of very different sizes (the buffer is sized from the first row and must grow), and non-ASCII text.
    const rows = Array.from({ length: 40 }, (_, i) => JSON.stringify({ sequence: String(i + 1), pad: 'x'.repeat(i % 7 === 0 ? 70_000 : i * 13), note: 'é✓' }));
    await store.write(() => rows.forEach((row, i) => putChange(changes, BigInt(i + 1), encodeChangeValue('apply', `cursor-${i + 1}`, row))));
    const coverage = { state: 'live' };
    for (const [after, through] of [[0n, 40n], [5n, 6n], [12n, 30n], [40n, 40n]] as const) {
      const page = deliveredPage(store, log, after, through, closing(coverage));
      const last = through > after ? `cursor-${through}` : null;
      assert.equal(page.count, Number(through - after));
      assert.equal(page.body.toString(), reference(rows.slice(Number(after), Number(through)), last, coverage), `(${after}, ${through}]`);
      assert.equal((JSON.parse(page.body.toString()) as { data: unknown[] }).data.length, Number(through - after));
    }
    assert.equal(deliveredPage(store, null, 0n, 3n, closing(null)).body.toString(), reference([], null, null), 'no tables: an empty page');

    // Released buffers are reused; a page written into one is still exactly its own.
    for (let i = 0; i < 3; i += 1) {
      const big = deliveredPage(store, log, 0n, 40n, closing(coverage));
      const small = deliveredPage(store, log, 5n, 6n, closing(coverage));
      assert.equal(small.body.toString(), reference(rows.slice(5, 6), 'cursor-6', coverage));
      assert.equal(big.body.toString(), reference(rows, 'cursor-40', coverage), 'a page in use is not written over by the next one');
      big.release();
      small.release();
      small.release();
    }
  } finally {
    await store.close();
  }
});

test('a consumer page reads what another thread delivered a moment ago, and refuses a range the log lacks', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cdn-consumer-page-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const store = openStore({ dataDir, chainId: 1 });
  try {
    const { changes } = store.processor('blobs');
    const log = { changes, epoch: store.epoch, chainId: 1, instance: 'blobs' };
    await store.write(() => putChange(changes, 1n, encodeChangeValue('apply', 'c1', '{"sequence":"1"}')));
    assert.equal(readChanges(log, 0n, 10).length, 1, 'this read renews the thread snapshot');

    // Block this thread (no timer can reset the snapshot) while a worker commits changes 2..4.
    const signal = new SharedArrayBuffer(4);
    const worker = new Worker(new URL('../../store/helpers/change-writer.js', import.meta.url), { workerData: { dataDir, instance: 'blobs', from: 2, to: 4, signal } });
    assert.equal(Atomics.wait(new Int32Array(signal), 0, 0, 30_000), 'ok', 'the worker committed');

    assert.equal(readChanges(log, 1n, 10).length, 0, 'the snapshot of this turn predates the commit (the hazard)');
    const page = deliveredPage(store, log, 1n, 4n, closing(null));
    assert.deepEqual((JSON.parse(page.body.toString()) as { data: Array<{ sequence: string }> }).data.map((change) => change.sequence), ['2', '3', '4']);
    assert.throws(() => deliveredPage(store, log, 3n, 6n, closing(null)), /changes 4\.\.6 were delivered but the log does not hold change 5/);
    await once(worker, 'exit');
  } finally {
    await store.close();
  }
});
