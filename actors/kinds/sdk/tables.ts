/**
 * What a kind reads and writes its instance's tables with (`store/`, re-exported): the binary table type, the
 * fixed-width key encodings that keep LMDB's byte order numeric, its collections' shapes, and the coverage types
 * and checks a query answers with. A kind imports them from here, never from `store/` itself.
 */
export type { BinaryTable } from '../../../store/store.js';
export { hashKey, u64Key } from '../../../store/keys.js';
export type { CollectionDescription, CollectionRow, CollectionRowMeta, CollectionScan } from '../../../store/collection.js';
export type { Finality } from '../../../store/chain-types.js';
export { rangeCovered, stateOrigin, type BlockRange, type ProcessorCoverage, type ProcessorProgress } from '../../../store/coverage.js';
