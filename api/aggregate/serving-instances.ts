/**
 * The registry's view of rebuilds (spec §9.5, store/rebuilds.ts), read from the store at each lookup: which instance
 * serves a processor after a promote or rollback, and whether a replacement instance is still being rebuilt.
 */
import type { Store } from '../../store/store.js';
import { REBUILDING_STATES, rebuildOfInstance, servingInstance } from '../../store/rebuilds.js';
import type { ServingLookup } from './configured-processors.js';

export function storeServingLookup(store: Store): ServingLookup {
  return {
    serving: (id) => {
      // A promote commits in the outbox's worker: begin from the newest committed state.
      store.env.resetReadTxn();
      return servingInstance(store, id);
    },
    replacement: (name) => {
      const record = rebuildOfInstance(store, name);
      return record && { id: record.id, processor: record.processor, instance: record.instance, state: record.state, rebuilding: REBUILDING_STATES.has(record.state) };
    },
  };
}
