import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { once } from 'node:events';
import { encodeChangeValue, putChange, readChanges, readDeliveredChanges } from '../../store/change-log.js';
import { openStore } from '../../store/env.js';

test('changes another thread committed a moment ago are read in full, although this thread held an older snapshot', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cdn-change-log-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const store = openStore({ dataDir, chainId: 1 });
  try {
    const { changes } = store.processor('blobs');
    await store.write(() => putChange(changes, 1n, encodeChangeValue('apply', 'c1', '{"sequence":"1"}')));
    assert.equal(readChanges(changes, 0n, 10).length, 1, 'this read renews the thread snapshot');

    // Block this thread (no timer can reset the snapshot) while a worker commits changes 2..4.
    const signal = new SharedArrayBuffer(4);
    const worker = new Worker(new URL('./helpers/change-writer.js', import.meta.url), { workerData: { dataDir, instance: 'blobs', from: 2, to: 4, signal } });
    assert.equal(Atomics.wait(new Int32Array(signal), 0, 0, 30_000), 'ok', 'the worker committed');

    assert.equal(readChanges(changes, 1n, 10).length, 0, 'the snapshot of this turn predates the commit (the hazard)');
    assert.deepEqual(readDeliveredChanges(store, changes, 1n, 4n).map((change) => change.sequence), [2n, 3n, 4n]);
    assert.deepEqual(readDeliveredChanges(store, changes, 4n, 4n), []);
    assert.throws(() => readDeliveredChanges(store, changes, 3n, 6n), /changes 4\.\.6 were delivered but the log holds 1 of them from 4/);
    await once(worker, 'exit');
  } finally {
    await store.close();
  }
});
