/** The erc20 kind's schema document (GET /v1/processors/{p}/schema). */
import { ERC20_CHANGE_SCHEMA } from './collections.js';

const address = { type: 'string', pattern: '^0x[0-9a-f]{40}$' } as const;
const lastChange = {
  type: 'object',
  properties: { blockNumber: { type: 'integer', minimum: 0 }, blockHash: { type: 'string', pattern: '^0x[0-9a-f]{64}$' }, timestamp: { type: 'integer', minimum: 0, description: 'The block\'s timestamp (seconds).' } },
} as const;

export const ERC20_SCHEMA = {
  changeSchema: ERC20_CHANGE_SCHEMA,
  collections: { balances: { $ref: '#/types/Erc20Balance' } },
  changeKinds: {
    'erc20.balance.put': { $ref: '#/types/Erc20Balance', description: 'The holder\'s row after the block (apply), or restored by an undo.' },
    'erc20.block.finalized': { type: 'null', description: 'Blocks through the envelope\'s block are final: no row they wrote can be undone.' },
    'erc20.balance.delete': { $ref: '#/types/Erc20BalanceDelete', description: 'The holder\'s balance became zero (apply; lastChange is the block), or an undo removed its row (lastChange null).' },
  },
  types: {
    Erc20Balance: {
      type: 'object',
      properties: {
        token: address,
        address,
        balance: { type: 'string', pattern: '^-?[0-9]+$', description: 'Lossless decimal: the balance when coverage is exact (see the balances route), else the net change since the instance\'s first block (then it may be negative). The zero address is no holder: mints credit the recipient and burns debit the sender only.' },
        lastChange,
        finality: { enum: ['included', 'safe', 'finalized'] },
      },
    },
    Erc20BalanceDelete: { type: 'object', properties: { token: address, address, lastChange: { ...lastChange, type: ['object', 'null'] } } },
  },
} as const;
