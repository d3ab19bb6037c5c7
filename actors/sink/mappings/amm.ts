/**
 * amm pools (change schema amm.v1): `amm.pool.put` upserts the pool's row, `amm.pool.delete` removes it (an undo
 * of the block that first saw it); typed columns for the pool's state, lossless.
 */
import { field, rowPerKeyMapping } from './mapping.js';

export const AMM_MAPPING = rowPerKeyMapping({
  kind: 'amm',
  changeSchema: 'amm.v1',
  prefix: 'amm.pool',
  collection: {
    collection: 'pools',
    columns: [
      { name: 'pool', type: 'text', expression: `data->>'pool'` },
      { name: 'protocol', type: 'text', expression: `data->>'protocol'` },
      { name: 'reserve0', type: 'numeric(78,0)', expression: field('reserve0', 'numeric(78,0)') },
      { name: 'reserve1', type: 'numeric(78,0)', expression: field('reserve1', 'numeric(78,0)') },
      { name: 'sqrt_price_x96', type: 'numeric(78,0)', expression: field('sqrtPriceX96', 'numeric(78,0)') },
      { name: 'tick', type: 'integer', expression: field('tick', 'integer') },
      { name: 'liquidity', type: 'numeric(78,0)', expression: field('liquidity', 'numeric(78,0)') },
      { name: 'swap_count', type: 'numeric', expression: field('swapCount', 'numeric') },
      { name: 'volume0', type: 'numeric', expression: field('volume0', 'numeric') },
      { name: 'volume1', type: 'numeric', expression: field('volume1', 'numeric') },
    ],
    indexes: [{ suffix: 'protocol', on: 'protocol' }],
  },
});
