/**
 * The light-client store's persistence for the finality lane: the `finality.lightClient` table of
 * the node's LMDB store (store/light-client-store.ts), and the stored canonical chain the resumed
 * store's finalized execution block must still link to.
 */
import type { Logger } from '../../runtime/log.js';
import { bytesToHex } from '../../net/eth/hex.js';
import { getCanonicalHash } from '../../store/chain-material.js';
import type { Store } from '../../store/store.js';
import { loadLightClientRecord, removeLightClientRecord, saveLightClientRecord } from '../../store/light-client-store.js';
import type { LightClientPersistence } from './beacon-api.js';

export function storePersistence(store: Store, log: Pick<Logger, 'info' | 'warn'>): LightClientPersistence {
  return {
    load: () => loadLightClientRecord(store),
    save: (record) => saveLightClientRecord(store, record),
    discard: () => removeLightClientRecord(store),
    canonicalHash(number) {
      const hash = getCanonicalHash(store, number);
      return hash ? bytesToHex(hash) : null;
    },
    info: (message, fields) => log.info(message, fields),
    warn: (message, fields) => log.warn(message, fields),
  };
}
