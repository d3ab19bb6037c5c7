/**
 * erc20 balances (change schema erc20.v1): `erc20.balance.put` upserts the holder's row (after a block, or restored
 * by an undo), `erc20.balance.delete` removes it; typed columns token, holder and a lossless balance.
 */
import { field, rowPerKeyMapping } from './mapping.js';

export const ERC20_MAPPING = rowPerKeyMapping({
  kind: 'erc20',
  changeSchema: 'erc20.v1',
  prefix: 'erc20.balance',
  collection: {
    collection: 'balances',
    columns: [
      { name: 'token', type: 'text', expression: `data->>'token'` },
      { name: 'holder', type: 'text', expression: `data->>'address'` },
      // Signed: the net change since the instance's first block when coverage is not exact (see the kind's schema).
      { name: 'balance', type: 'numeric(78,0)', expression: field('balance', 'numeric(78,0)') },
    ],
    indexes: [
      { suffix: 'holder', on: 'holder' },
      { suffix: 'token_balance', on: 'token, balance DESC' },
    ],
  },
});
