/** Worker thread body for the map-release test: reads every record through the store's map, pass after pass. */
import { parentPort, workerData } from 'node:worker_threads';
import { openStore } from '../../../store/store.js';
import { u64Key } from '../../../store/keys.js';

/** The test's record keys: 32 bytes, like the table's block hashes. */
export function recordKey(i: number): Buffer {
  return Buffer.concat([u64Key(i), Buffer.alloc(24)]);
}

interface MapReaderData {
  readonly dataDir: string;
  readonly records: number;
  readonly passes: number;
}

const { dataDir, records, passes } = workerData as MapReaderData;
const store = openStore({ dataDir });
let wrong = 0;
for (let pass = 0; pass < passes; pass++) {
  for (let i = 0; i < records; i++) {
    const value = store.chain.headers.getBinary(recordKey(i));
    if (value === undefined || value.length !== 4000 || value[0] !== (i & 0xff) || value[3999] !== (i & 0xff)) wrong++;
  }
  parentPort?.postMessage({ pass });
}
parentPort?.postMessage({ done: true, wrong });
await store.close();
