/** The kinds the sink can land, by processor kind. A kind without a mapping is refused at start, naming these. */
import { AMM_MAPPING } from './amm.js';
import { BLOBS_MAPPING } from './blobs.js';
import { ERC20_MAPPING } from './erc20.js';
import type { KindMapping } from './mapping.js';

export type { CollectionMapping, KindMapping, RowWrite, TableIndex, TypedColumn } from './mapping.js';
export { UnknownChangeError } from './mapping.js';

export const KIND_MAPPINGS: ReadonlyMap<string, KindMapping> = new Map([ERC20_MAPPING, BLOBS_MAPPING, AMM_MAPPING].map((m) => [m.kind, m]));
