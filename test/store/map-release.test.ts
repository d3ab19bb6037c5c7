import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { openStore } from '../../store/store.js';
import { startMapRelease } from '../../store/map-release.js';
import { u64Key } from '../../store/keys.js';
import { tempDir } from './helpers/temp-dir.js';

const RECORDS = 8192; // 4000-byte values: one page each, 32 MB through the map
const recordKey = (i: number) => Buffer.concat([u64Key(i), Buffer.alloc(24)]);
const valueOf = (i: number) => Buffer.alloc(4000, i & 0xff);

function writeRecords(dataDir: string) {
  const store = openStore({ dataDir, chainId: 1 });
  store.env.transactionSync(() => {
    for (let i = 0; i < RECORDS; i++) store.chain.headers.putSync(recordKey(i), valueOf(i));
  });
  return store;
}

test('a release gives back the map pages the process read, and every record reads back unchanged', async (t) => {
  const dataDir = tempDir(t);
  const store = writeRecords(dataDir);
  const job = startMapRelease({ dataDir, intervalMs: 3_600_000 });
  try {
    if (job.inactive !== null) return t.skip(`map release not active: ${job.inactive}`);
    const readAll = () => { for (let i = 0; i < RECORDS; i++) assert.ok(valueOf(i).equals(store.chain.headers.getBinary(recordKey(i))!), `record ${i}`); };
    readAll();
    job.releaseNow();
    const first = job.stats();
    assert.equal(first.releases, 1);
    assert.ok(first.releasedBytes >= 16 * 1024 ** 2, `gave back ${first.releasedBytes} bytes after 32 MB were read through the map`);
    readAll();
    job.releaseNow();
    assert.ok(job.stats().releasedBytes - first.releasedBytes >= 16 * 1024 ** 2, 'the pages read again are given back again');
  } finally {
    job.stop();
    await store.close();
  }
});

test('releases racing with read transactions on other threads never change what they read', async (t) => {
  const dataDir = tempDir(t);
  const store = writeRecords(dataDir);
  const job = startMapRelease({ dataDir, intervalMs: 3_600_000 });
  try {
    if (job.inactive !== null) return t.skip(`map release not active: ${job.inactive}`);
    const readers = [0, 1].map(() => new Worker(new URL('./helpers/map-reader.js', import.meta.url), { workerData: { dataDir, records: RECORDS, passes: 20 } }));
    const results = readers.map((worker) => new Promise<{ wrong: number }>((resolve, reject) => {
      worker.on('message', (message: { done?: boolean; wrong: number }) => { if (message.done) resolve(message); });
      worker.once('error', reject);
    }));
    let finished = false;
    void Promise.all(results).finally(() => { finished = true; });
    // Release as often as the event loop lets us while both readers run.
    while (!finished) {
      job.releaseNow();
      await new Promise((resolve) => setImmediate(resolve));
    }
    for (const result of await Promise.all(results)) assert.equal(result.wrong, 0);
    assert.ok(job.stats().releases > 1);
  } finally {
    job.stop();
    await store.close();
  }
});
