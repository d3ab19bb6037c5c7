import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { openStore, STORE_SCHEMA_VERSION } from '../../store/store.js';
import { StoreChainMismatchError, StoreCorruptError, StoreNotFoundError, StoreSchemaVersionError } from '../../store/errors.js';
import { hashKey, u64Key } from '../../store/keys.js';
import { FIXED_TABLES, parseProcessorTableName, PROCESSOR_TABLE_KINDS } from '../../store/tables.js';
import { tempDir } from './helpers/temp-dir.js';

test('a new store gets a random non-zero epoch, the current schema version, its chain id and creation time', async (t) => {
  const dataDir = tempDir(t);
  const store = openStore({ dataDir, chainId: 1 });
  try {
    assert.equal(typeof store.epoch, 'bigint');
    assert.notEqual(store.epoch, 0n);
    assert.ok(store.epoch < 1n << 64n);
    assert.equal(store.schemaVersion, STORE_SCHEMA_VERSION);
    assert.equal(STORE_SCHEMA_VERSION, 1);
    assert.equal(store.chainId, 1);
    assert.ok(!Number.isNaN(Date.parse(store.createdAt)));
    assert.equal(store.path, `${dataDir}/db`);
  } finally {
    await store.close();
  }
  const other = openStore({ dataDir: tempDir(t) });
  try {
    assert.notEqual(other.epoch, store.epoch, 'two stores must not share an epoch');
  } finally {
    await other.close();
  }
});

test('reopening keeps epoch, creation time and data', async (t) => {
  const dataDir = tempDir(t);
  const first = openStore({ dataDir, chainId: 1 });
  const hash = hashKey(`0x${'11'.repeat(32)}`);
  first.chain.headers.putSync(hash, Buffer.from('header-rlp'));
  const { epoch, createdAt } = first;
  await first.close();

  const again = openStore({ dataDir, chainId: 1 });
  try {
    assert.equal(again.epoch, epoch);
    assert.equal(again.createdAt, createdAt);
    assert.equal(again.chain.headers.get(hash)?.toString(), 'header-rlp');
  } finally {
    await again.close();
  }
});

test('the chain id is recorded by the first open that names one and a different one is refused naming both', async (t) => {
  const dataDir = tempDir(t);
  const unnamed = openStore({ dataDir });
  assert.equal(unnamed.chainId, null);
  await unnamed.close();

  const named = openStore({ dataDir, chainId: 17_000 });
  assert.equal(named.chainId, 17_000);
  await named.close();

  assert.throws(
    () => openStore({ dataDir, chainId: 1 }),
    (error: unknown) =>
      error instanceof StoreChainMismatchError && /17000/.test(error.message) && /chain 1 was requested/.test(error.message),
  );
  assert.throws(() => openStore({ dataDir, chainId: 1, readOnly: true }), StoreChainMismatchError);
  const sameChain = openStore({ dataDir, chainId: 17_000 });
  assert.equal(sameChain.chainId, 17_000);
  await sameChain.close();
});

test('a store of another schema version is refused with what it has, what is supported and what to do', async (t) => {
  const dataDir = tempDir(t);
  const store = openStore({ dataDir });
  store.meta.putSync('schemaVersion', 2);
  await store.close();

  assert.throws(
    () => openStore({ dataDir }),
    (error: unknown) =>
      error instanceof StoreSchemaVersionError &&
      error.found === 2 &&
      error.supported === 1 &&
      /schema version 2/.test(error.message) &&
      /supports schema version 1/.test(error.message) &&
      /newer binary/.test(error.message),
  );
  assert.throws(() => openStore({ dataDir, readOnly: true }), StoreSchemaVersionError);
});

test('a store whose meta was lost is refused, never given a fresh epoch', async (t) => {
  const dataDir = tempDir(t);
  const store = openStore({ dataDir, chainId: 1 });
  store.chain.headers.putSync(Buffer.alloc(32, 1), Buffer.from('header'));
  for (const key of ['storeEpoch', 'schemaVersion', 'chainId', 'createdAt']) store.meta.removeSync(key);
  await store.close();
  assert.throws(() => openStore({ dataDir, chainId: 1 }), (error: unknown) => error instanceof StoreCorruptError && /meta is empty/.test(error.message));
});

test('a read-only open of a directory without a store refuses instead of creating one', (t) => {
  const dataDir = tempDir(t);
  assert.throws(() => openStore({ dataDir, readOnly: true }), StoreNotFoundError);
});

test('a new store creates every fixed table; processor tables appear on first use under p.<instance>.<kind>', async (t) => {
  const dataDir = tempDir(t);
  const store = openStore({ dataDir });
  try {
    for (const spec of FIXED_TABLES) assert.ok(store.tableNames().includes(spec.name), `missing ${spec.name}`);
    assert.deepEqual(store.processorInstances(), []);

    const blobs = store.processor('blobs-v1');
    assert.equal(store.processor('blobs-v1'), blobs, 'processor tables are opened once per instance');
    blobs.changes.putSync(u64Key(1n), Buffer.from('frame'));
    blobs.savepoints.putSync('before-upgrade', { block: 10, note: 'operator' });
    assert.deepEqual(blobs.savepoints.get('before-upgrade'), { block: 10, note: 'operator' });

    assert.deepEqual(store.processorInstances(), ['blobs-v1']);
    const processorTables = store.tableNames().filter((name) => parseProcessorTableName(name)?.instance === 'blobs-v1');
    assert.deepEqual(processorTables.sort(), PROCESSOR_TABLE_KINDS.map((kind) => `p.blobs-v1.${kind}`).sort());
    assert.throws(() => store.processor('../escape'), RangeError);
  } finally {
    await store.close();
  }
});

test('binary tables keep big-endian u64 keys in numeric order for range scans', async (t) => {
  const store = openStore({ dataDir: tempDir(t) });
  try {
    for (const number of [300, 2, 70_000, 1]) store.chain.canonical.putSync(u64Key(number), Buffer.alloc(32, number % 256));
    const numbers = [...store.chain.canonical.getKeys({ start: u64Key(2), end: u64Key(100_000) })].map((key) => key.readBigUInt64BE(0));
    assert.deepEqual(numbers, [2n, 300n, 70_000n]);
  } finally {
    await store.close();
  }
});

test('msgpack record tables keep bigints above 2^64 losslessly', async (t) => {
  const store = openStore({ dataDir: tempDir(t) });
  try {
    const big = (1n << 200n) + 12_345n;
    store.jobs.putSync('job-1', { state: 'completed', wei: big });
    assert.deepEqual(store.jobs.get('job-1'), { state: 'completed', wei: big });
  } finally {
    await store.close();
  }
});

test('a worker thread opens the same store, reads what the main thread wrote and writes back', async (t) => {
  const dataDir = tempDir(t);
  const store = openStore({ dataDir, chainId: 1 });
  try {
    const readKey = Buffer.alloc(32, 0xaa);
    const writeKey = Buffer.alloc(32, 0xbb);
    store.chain.headers.putSync(readKey, Buffer.from('written by main'));

    const worker = new Worker(new URL('./helpers/store-worker.js', import.meta.url), {
      workerData: { dataDir, readKey: readKey.toString('hex'), writeKey: writeKey.toString('hex') },
    });
    const [report] = (await once(worker, 'message')) as [{ epoch: string; seen: string | null }];
    const [exitCode] = (await once(worker, 'exit')) as [number];

    assert.equal(exitCode, 0);
    assert.equal(report.epoch, store.epoch.toString());
    assert.equal(report.seen, 'written by main');
    store.env.resetReadTxn();
    assert.equal(store.chain.headers.get(writeKey)?.toString(), 'written by worker');
  } finally {
    await store.close();
  }
});

test('a read-only open sees the store but cannot create processor tables', async (t) => {
  const dataDir = tempDir(t);
  const writer = openStore({ dataDir, chainId: 5 });
  writer.processor('erc20').entities.putSync(Buffer.from('k'), Buffer.from('v'));
  const epoch = writer.epoch;
  await writer.close();

  const reader = openStore({ dataDir, readOnly: true });
  try {
    assert.equal(reader.epoch, epoch);
    assert.equal(reader.chainId, 5);
    assert.equal(reader.processor('erc20').entities.get(Buffer.from('k'))?.toString(), 'v');
    assert.throws(() => reader.processor('never-created'), /has no table p\.never-created\.entities/);
  } finally {
    await reader.close();
  }
});

test('store.write is atomic: a callback that throws commits nothing it wrote, one that returns commits everything', async (t) => {
  const store = openStore({ dataDir: tempDir(t) });
  try {
    const state = store.processor('atomic').state;
    await assert.rejects(store.write(() => {
      state.put(Buffer.from('first'), Buffer.from('written before the throw'));
      state.put(Buffer.from('second'), Buffer.from('also'));
      throw new Error('the apply failed half-way');
    }), /the apply failed half-way/);
    assert.equal(state.getBinary(Buffer.from('first')), undefined);
    assert.equal(state.getBinary(Buffer.from('second')), undefined);
    const result = await store.write(() => {
      state.put(Buffer.from('first'), Buffer.from('kept'));
      return 7;
    });
    assert.equal(result, 7);
    assert.equal(String(state.getBinary(Buffer.from('first'))), 'kept');
  } finally {
    await store.close();
  }
});
