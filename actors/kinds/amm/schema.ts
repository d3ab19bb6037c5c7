/** The amm kind's schema document (GET /v1/processors/{p}/schema). */
import { AMM_CHANGE_SCHEMA } from './collections.js';

const decimal = { type: ['string', 'null'], pattern: '^-?[0-9]+$' } as const;

export const AMM_SCHEMA = {
  changeSchema: AMM_CHANGE_SCHEMA,
  collections: { pools: { $ref: '#/types/AmmPool' } },
  changeKinds: {
    'amm.pool.put': { $ref: '#/types/AmmPool', description: 'The pool\'s row after the block (apply), or restored by an undo.' },
    'amm.pool.delete': { type: 'object', properties: { pool: { type: 'string' } }, description: 'An undo removed the pool\'s row (its first event was in the undone block).' },
    'amm.block.finalized': { type: 'null', description: 'Blocks through the envelope\'s block are final.' },
  },
  types: {
    AmmPool: {
      type: 'object',
      properties: {
        pool: { type: 'string', pattern: '^0x[0-9a-f]{40}$' },
        protocol: { enum: ['uniswap_v2', 'uniswap_v3'] },
        reserve0: { ...decimal, description: 'V2: token0 reserve after the last Sync (null for V3).' },
        reserve1: { ...decimal, description: 'V2: token1 reserve after the last Sync (null for V3).' },
        sqrtPriceX96: { ...decimal, description: 'V3: price after the last Initialize or Swap.' },
        tick: { type: ['integer', 'null'], description: 'V3: current tick.' },
        liquidity: { ...decimal, description: 'V3: in-range liquidity (Swap sets it; Mint/Burn spanning the tick move it).' },
        swapCount: { type: 'string', pattern: '^[0-9]+$', description: 'Swaps seen since the instance\'s first block.' },
        volume0: { type: 'string', pattern: '^[0-9]+$', description: 'token0 base units moved by those swaps (in plus out).' },
        volume1: { type: 'string', pattern: '^[0-9]+$', description: 'token1 base units moved by those swaps (in plus out).' },
        lastChange: { type: 'object', properties: { blockNumber: { type: 'integer' }, blockHash: { type: 'string' }, timestamp: { type: 'integer', description: 'The block\'s timestamp (seconds).' } } },
        finality: { enum: ['included', 'finalized'] },
      },
    },
  },
} as const;
