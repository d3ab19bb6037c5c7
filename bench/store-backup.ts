/**
 * `node dist/bench/store-backup.js [GB] [DIR]`: the Measure figure of `db backup` — builds a store of
 * about GB gigabytes (default 1) in DIR (default a temporary directory): one processor instance
 * whose change log holds ~2.8 KB envelopes with real cursors (the shape of blob changes) and one
 * consumer; then times `db backup` (compacting copy, epoch rotation, verification), a restore copy
 * of the backup into a data directory, and `db verify` on the restored store. Prints one JSON line.
 * Not a test and not a workload of `npm run bench` (it writes gigabytes).
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeChangeValue, putChange } from '../store/change-log.js';
import { dbBackup, dbVerify } from '../store/commands.js';
import { INITIAL_PROGRESS, writeProgress } from '../store/coverage.js';
import { encodeCursor } from '../store/cursor.js';
import { openStore } from '../store/store.js';
import { dataFileSize } from '../store/stats.js';
import { storePath } from '../store/store.js';

const CHAIN_ID = 1;
const PAYLOAD = 'x'.repeat(2600);
const BATCH = 10_000;

async function buildStore(dataDir: string, bytes: number): Promise<number> {
  const store = openStore({ dataDir, chainId: CHAIN_ID });
  const tables = store.processor('blobs');
  let sequence = 0n;
  while (dataFileSize(storePath(dataDir)) < bytes) {
    await store.write(() => {
      for (let i = 0; i < BATCH; i += 1) {
        sequence += 1n;
        const cursor = encodeCursor({ epoch: store.epoch, chainId: CHAIN_ID, instance: 'blobs', sequence, block: { number: Number(sequence), hash: `0x${sequence.toString(16).padStart(64, '0')}` } });
        putChange(tables.changes, sequence, encodeChangeValue('apply', cursor, `{"apiVersion":"1","sequence":"${sequence}","cursor":"${cursor}","operation":"apply","data":"${PAYLOAD}"}`));
      }
      writeProgress(tables.state, { ...INITIAL_PROGRESS, changeSequence: sequence });
    });
  }
  await store.close();
  return Number(sequence);
}

const seconds = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e9;

async function main(): Promise<void> {
  const gigabytes = Number(process.argv[2] ?? '1');
  const root = process.argv[3] ?? mkdtempSync(join(tmpdir(), 'cdn-backup-bench-'));
  const dataDir = join(root, 'data');
  try {
    let at = process.hrtime.bigint();
    const changes = await buildStore(dataDir, gigabytes * 1024 ** 3);
    const buildSeconds = seconds(at);
    at = process.hrtime.bigint();
    const backup = await dbBackup(dataDir, join(root, 'backup'));
    const backupSeconds = seconds(at);
    at = process.hrtime.bigint();
    cpSync(join(root, 'backup', 'db'), join(root, 'restored', 'db'), { recursive: true });
    const restoreCopySeconds = seconds(at);
    at = process.hrtime.bigint();
    const verify = await dbVerify(join(root, 'restored'));
    const verifySeconds = seconds(at);
    process.stdout.write(`${JSON.stringify({
      changes, sourceBytes: backup.sizeBytesSource, backupBytes: backup.sizeBytes, buildSeconds, backupSeconds,
      backupInternalSeconds: backup.seconds, restoreCopySeconds, verifySeconds, verified: verify.ok,
    })}\n`);
  } finally {
    if (process.argv[3] === undefined) rmSync(root, { recursive: true, force: true });
  }
}

await main();
