/** Worker thread body for the env test: opens the store the main thread wrote, reads, writes, reports. */
import { parentPort, workerData } from 'node:worker_threads';
import { openStore } from '../../../store/store.js';

interface StoreWorkerData {
  readonly dataDir: string;
  readonly readKey: string;
  readonly writeKey: string;
}

const { dataDir, readKey, writeKey } = workerData as StoreWorkerData;
const store = openStore({ dataDir });
const seen = store.chain.headers.get(Buffer.from(readKey, 'hex'));
store.chain.headers.putSync(Buffer.from(writeKey, 'hex'), Buffer.from('written by worker'));
parentPort?.postMessage({ epoch: store.epoch.toString(), seen: seen ? Buffer.from(seen).toString('utf8') : null });
await store.close();
