/** Worker thread body for the change-log test: appends changes to a store, then wakes the blocked main thread. */
import { workerData } from 'node:worker_threads';
import { encodeChangeValue, putChange } from '../../../store/change-log.js';
import { openStore } from '../../../store/store.js';

interface ChangeWriterData {
  readonly dataDir: string;
  readonly instance: string;
  readonly from: number;
  readonly to: number;
  readonly signal: SharedArrayBuffer;
}

const { dataDir, instance, from, to, signal } = workerData as ChangeWriterData;
const store = openStore({ dataDir });
const { changes } = store.processor(instance);
await store.write(() => {
  for (let sequence = from; sequence <= to; sequence += 1) putChange(changes, BigInt(sequence), encodeChangeValue('apply', `c${sequence}`, `{"sequence":"${sequence}"}`));
});
const flag = new Int32Array(signal);
Atomics.store(flag, 0, 1);
Atomics.notify(flag, 0);
await store.close();
