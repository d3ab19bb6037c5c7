/**
 * ERC-20 balances (`kind = "erc20"`), an ordered-state kind: `map` nets a block's `Transfer` logs per
 * (token, holder) (transfers.ts); `reduce` folds them into one balance row per holder through the
 * state API, whose recorded inverses make undo exact (balances.ts); typed route in query.ts. Finality
 * re-marks no row: a row's finality is derived where it is served (balances.ts servedFinality).
 */
import { defineProcessorKind } from '../sdk/define.js';
import { reduceBalances, restoredChange } from './balances.js';
import { BALANCES_COLLECTION, ERC20_CHANGE_SCHEMA } from './collections.js';
import { ERC20_OPTIONS_SCHEMA, erc20Options, type Erc20Options } from './options.js';
import { ERC20_QUERY } from './query.js';
import { ERC20_SCHEMA } from './schema.js';
import { TRANSFER_TOPIC, transferDeltas, type BalanceDeltas } from './transfers.js';

export default defineProcessorKind<Erc20Options, BalanceDeltas>({
  name: 'erc20',
  version: '1.0.0',
  sdk: '^1.0.0',
  ordering: 'ordered_state',
  needs: { bodies: false, receipts: true },
  changeSchema: ERC20_CHANGE_SCHEMA,
  deliveryOrdering: 'block_ordered',
  schema: ERC20_SCHEMA,
  collections: [BALANCES_COLLECTION],
  queryExtensions: [ERC20_QUERY],
  finalizedKind: 'erc20.block.finalized',
  options: erc20Options,
  optionsSchema: ERC20_OPTIONS_SCHEMA,
  map: transferDeltas,
  reduce: (state, deltas, block) => reduceBalances(state, deltas, block),
  changeOf: restoredChange,
  // Transfer logs of the configured tokens (any contract with "*"): blocks whose bloom has neither need no receipts.
  logInterest: (options) => ({ addresses: options.tokens === null ? [] : [...options.tokens.keys()] as `0x${string}`[], topics: [TRANSFER_TOPIC] }),
});
