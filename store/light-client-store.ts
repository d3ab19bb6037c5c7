/**
 * The finality lane's light-client store across restarts (`finality.lightClient`): one record under
 * the name `store`, written after the store moves (a new finalized header, a next sync committee
 * learned) and read once at start. The record's shape belongs to net/beacon/store-codec.ts; this
 * module only reads, writes and removes it.
 */
import type { Store } from './store.js';

const KEY = 'store';

export function loadLightClientRecord(store: Store): unknown {
  return store.finalityLightClient().get(KEY);
}

export function saveLightClientRecord(store: Store, record: unknown): Promise<void> {
  const table = store.finalityLightClient();
  return store.write(() => { table.put(KEY, record); });
}

export function removeLightClientRecord(store: Store): Promise<void> {
  const table = store.finalityLightClient();
  return store.write(() => { table.remove(KEY); });
}
