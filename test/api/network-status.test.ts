import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { buildNetworkStatus } from '../../api/network-status.js';
import { openStore } from '../../store/store.js';
import { u64Key } from '../../store/keys.js';
import { blockRecordKey } from '../../store/undo-records.js';
import { tempDir } from '../store/helpers/temp-dir.js';

test('processors[].pendingDeltas counts the inverse writes kept for blocks not yet finalized, per instance', async (t) => {
  const dir = tempDir(t);
  const store = openStore({ dataDir: join(dir, 'data'), chainId: 7 });
  t.after(() => store.close());
  const erc20 = store.processor('erc20-v1');
  // Three blocks' inverse writes: one record a block, its count in the key (store/undo-records.ts); block 12's
  // are an earlier version's records, one a write (u64 block ‖ u32 ordinal).
  await store.write(() => {
    for (let block = 10; block < 12; block += 1) erc20.undo.put(blockRecordKey(block, 4), Buffer.from([1, 2, 3]));
    for (let ordinal = 0; ordinal < 4; ordinal += 1) erc20.undo.put(Buffer.concat([u64Key(12), u64Key(ordinal).subarray(4)]), Buffer.from([1, 2, 3]));
  });
  store.processor('blobs');
  const status = await buildNetworkStatus({
    store, source: 'devnet',
    processors: [{ id: 'erc20', instance: 'erc20-v1', startBlock: null }, { id: 'blobs', instance: 'blobs', startBlock: null }, { id: 'amm', instance: 'amm', startBlock: null }],
    readiness: async () => ({ ready: true, lanes: [] }),
    p2p: async () => { throw new Error('not p2p'); },
  });
  assert.deepEqual(status.processors, [{ id: 'erc20', pendingDeltas: 12 }, { id: 'blobs', pendingDeltas: 0 }, { id: 'amm', pendingDeltas: 0 }]);
  // Finality reconciles block 10: its inverses go, the others stay pending.
  await store.write(() => {
    for (const key of erc20.undo.getKeys({ start: u64Key(10), end: u64Key(11) })) erc20.undo.remove(key);
  });
  const later = await buildNetworkStatus({
    store, source: 'devnet', processors: [{ id: 'erc20', instance: 'erc20-v1', startBlock: null }],
    readiness: async () => ({ ready: true, lanes: [] }), p2p: async () => { throw new Error('not p2p'); },
  });
  assert.deepEqual(later.processors, [{ id: 'erc20', pendingDeltas: 8 }]);
});
