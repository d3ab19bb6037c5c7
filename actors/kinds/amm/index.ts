/**
 * AMM pools (`kind = "amm"`), an ordered-state kind: `map` decodes a block's Uniswap V2/V3 pool events
 * (events.ts); `reduce` folds them into one row per pool through the state API (pools.ts), so undo
 * restores rows exactly; typed route in query.ts.
 */
import { defineProcessorKind } from '../sdk/define.js';
import { AMM_CHANGE_SCHEMA, POOLS_COLLECTION } from './collections.js';
import { poolEvents, TOPICS, type PoolEvent } from './events.js';
import { AMM_OPTIONS_SCHEMA, ammOptions, type AmmOptions } from './options.js';
import { finalizedPool, reducePools, restoredPoolChange } from './pools.js';
import { AMM_QUERY } from './query.js';
import { AMM_SCHEMA } from './schema.js';

export default defineProcessorKind<AmmOptions, PoolEvent[]>({
  name: 'amm',
  version: '1.0.0',
  sdk: '^1.0.0',
  ordering: 'ordered_state',
  needs: { bodies: false, receipts: true },
  changeSchema: AMM_CHANGE_SCHEMA,
  deliveryOrdering: 'block_ordered',
  schema: AMM_SCHEMA,
  collections: [POOLS_COLLECTION],
  queryExtensions: [AMM_QUERY],
  finalizedKind: 'amm.block.finalized',
  options: ammOptions,
  optionsSchema: AMM_OPTIONS_SCHEMA,
  map: poolEvents,
  reduce: (state, events, block) => reducePools(state, events, block),
  changeOf: restoredPoolChange,
  finalizedValue: finalizedPool,
  // The pool events of the configured pools (any contract without a list): blocks whose bloom has none need no receipts.
  logInterest: (options) => ({ addresses: options.pools === null ? [] : [...options.pools] as `0x${string}`[], topics: Object.values(TOPICS) }),
});
