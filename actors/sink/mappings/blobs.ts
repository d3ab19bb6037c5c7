/**
 * blobs (change schema blobs.v1): a `blobs.block.put` carries one block and its blob transactions, upserted
 * together into `blocks` and `transactions`; a `blobs.block.delete` (a reorg) carries them as stored, deleted by
 * their keys; `blobs.schedule.put` upserts one fork's row of `schedule`. Keys are the node's entity keys (URL-safe
 * hex): a block `62‖u64 number` (the envelope's key), a transaction `74‖hash`, a schedule row the envelope's key.
 * Fee and gas quantities get typed `numeric` columns (lossless); the rows keep the node's JSON in `data`.
 */
import type { ChangeEnvelope } from '../../../api/client/index.js';
import { field, UnknownChangeError, type KindMapping, type RowWrite } from './mapping.js';

interface BlockData { readonly blockNumber: number; readonly blockHash: string; readonly finality: string }
interface TransactionData { readonly blockNumber: number; readonly blockHash: string; readonly txHash: string }
interface BlockChange { readonly block: BlockData & Record<string, unknown>; readonly transactions: ReadonlyArray<TransactionData & Record<string, unknown>> }
interface ScheduleData { readonly activationBlock: number | null }

const numeric = (name: string, key: string) => ({ name, type: 'numeric', expression: field(key, 'numeric') });
const integer = (name: string, key: string) => ({ name, type: 'integer', expression: field(key, 'integer') });
const bigint = (name: string, key: string) => ({ name, type: 'bigint', expression: field(key, 'bigint') });

/** The transaction's entity key: `74` then its hash. */
export function transactionKey(txHash: string): string {
  return `74${txHash.slice(2).toLowerCase()}`;
}

function blockWrites(change: ChangeEnvelope, remove: boolean): RowWrite[] {
  const payload = change.data as BlockChange;
  if (change.key === null || !payload?.block) throw new UnknownChangeError(change, 'blobs');
  const { block, transactions } = payload;
  const writes: RowWrite[] = [{
    collection: 'blocks', key: change.key, data: remove ? null : block,
    blockNumber: remove ? null : block.blockNumber, blockHash: remove ? null : block.blockHash, finality: remove ? null : block.finality,
  }];
  for (const transaction of transactions) {
    writes.push({
      collection: 'transactions', key: transactionKey(transaction.txHash), data: remove ? null : transaction,
      blockNumber: remove ? null : transaction.blockNumber, blockHash: remove ? null : transaction.blockHash, finality: remove ? null : block.finality,
    });
  }
  return writes;
}

function scheduleWrite(change: ChangeEnvelope): RowWrite {
  const data = change.data as ScheduleData & Record<string, unknown>;
  if (change.key === null || data === null || typeof data !== 'object') throw new UnknownChangeError(change, 'blobs');
  const activation = data.activationBlock;
  // The node reads a schedule row's block from the activation block's row; the envelope that fills activationBlock is that block's.
  const hash = activation !== null && change.block?.number === activation ? change.block.hash : null;
  return { collection: 'schedule', key: change.key, data, blockNumber: activation, blockHash: hash, finality: activation === null ? null : change.finality };
}

export const BLOBS_MAPPING: KindMapping = {
  kind: 'blobs',
  changeSchema: 'blobs.v1',
  collections: [
    {
      collection: 'blocks',
      columns: [
        bigint('block_timestamp', 'timestamp'),
        integer('blob_count', 'blobCount'),
        numeric('blob_gas_used', 'blobGasUsed'),
        numeric('excess_blob_gas', 'excessBlobGas'),
        numeric('blob_base_fee', 'blobBaseFee'),
        numeric('blob_eth_burned_wei', 'blobEthBurnedWei'),
        numeric('execution_base_fee', 'executionBaseFee'),
        numeric('gas_used', 'gasUsed'),
        numeric('gas_limit', 'gasLimit'),
        numeric('execution_eth_burned_wei', 'executionEthBurnedWei'),
        numeric('reserve_fee_wei', 'reserveFeeWei'),
        integer('transaction_count', 'transactionCount'),
        integer('target_blobs_per_block', 'targetBlobsPerBlock'),
        integer('max_blobs_per_block', 'maxBlobsPerBlock'),
      ],
      indexes: [{ suffix: 'timestamp', on: 'block_timestamp' }],
      dataFinality: true,
    },
    {
      collection: 'transactions',
      columns: [
        { name: 'tx_hash', type: 'text', expression: `data->>'txHash'` },
        { name: 'sender', type: 'text', expression: `data->>'senderAddress'` },
        integer('blob_count', 'blobCount'),
        numeric('total_burned_wei', 'totalBurnedWei'),
        numeric('execution_burned_wei', 'executionBurnedWei'),
        numeric('blob_burned_wei', 'blobBurnedWei'),
      ],
      indexes: [{ suffix: 'tx_hash', on: 'tx_hash' }, { suffix: 'sender', on: 'sender' }],
      dataFinality: false,
    },
    {
      collection: 'schedule',
      columns: [
        { name: 'fork', type: 'text', expression: `data->>'name'` },
        bigint('activation_block', 'activationBlock'),
        bigint('activation_timestamp', 'activationTimestamp'),
        integer('target_blobs_per_block', 'targetBlobsPerBlock'),
        integer('max_blobs_per_block', 'maxBlobsPerBlock'),
        numeric('base_fee_update_fraction', 'baseFeeUpdateFraction'),
      ],
      indexes: [],
      dataFinality: false,
    },
  ],
  writes(change) {
    switch (change.kind) {
      case 'blobs.block.put':
        return blockWrites(change, false);
      case 'blobs.block.delete':
        return blockWrites(change, true);
      case 'blobs.schedule.put':
        return [scheduleWrite(change)];
      default:
        throw new UnknownChangeError(change, 'blobs');
    }
  },
};
