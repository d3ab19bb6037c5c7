/**
 * The blob processor's descriptor (capabilities, SSE hello) and its schema document (`GET /v1/processors/{p}/schema`):
 * a JSON-Schema-shaped description of each record, with the field definitions as descriptions and properties in the
 * spec tables' order.
 */
import { BLOB_FIELD_DEFINITIONS } from './field-definitions.js';
import { TRANSFORM_VERSION } from './transform.js';
import { BLOB_SCHEDULE_SOURCES, FINALITIES, type BlobSchedule, type BlobsBlock, type BlobsBlockChange, type BlobTransaction } from './types.js';

export const BLOBS_PROCESSOR = Object.freeze({
  kind: 'blobs',
  version: '1.0.0',
  changeSchema: 'blobs.v1',
  genericApi: 'processor-v1',
  deliveryOrdering: 'block_versioned_idempotent',
  collections: Object.freeze(['blocks', 'transactions', 'schedule'] as const),
  changeKinds: Object.freeze(['blobs.block.put', 'blobs.block.delete', 'blobs.schedule.put'] as const),
} as const);

export type BlobsProcessorDescriptor = typeof BLOBS_PROCESSOR;

export interface PropertySchema {
  type?: string | readonly string[];
  pattern?: string;
  minimum?: number;
  enum?: readonly (string | number)[];
  items?: PropertySchema;
  $ref?: string;
  description?: string;
}

export interface ObjectSchema {
  type: 'object';
  description: string;
  required: readonly string[];
  additionalProperties: false;
  properties: Readonly<Record<string, PropertySchema>>;
}

const DECIMAL_PATTERN = '^(0|[1-9][0-9]*)$';
const DECIMAL: PropertySchema = { type: 'string', pattern: DECIMAL_PATTERN };
const DECIMAL_OR_NULL: PropertySchema = { type: ['string', 'null'], pattern: DECIMAL_PATTERN };
const INTEGER: PropertySchema = { type: 'integer', minimum: 0 };
const INTEGER_OR_NULL: PropertySchema = { type: ['integer', 'null'], minimum: 0 };
const HASH: PropertySchema = { type: 'string', pattern: '^0x[0-9a-f]{64}$' };
const ADDRESS: PropertySchema = { type: 'string', pattern: '^0x[0-9a-f]{40}$' };
const FORK_ID: PropertySchema = { type: 'string', pattern: '^0x[0-9a-f]{8}$' };
const STRING: PropertySchema = { type: 'string' };
const BOOLEAN: PropertySchema = { type: 'boolean' };

const BLOCK_TYPES: Record<keyof BlobsBlock, PropertySchema> = {
  network: STRING,
  blockNumber: INTEGER,
  blockHash: HASH,
  parentHash: HASH,
  timestamp: INTEGER,
  size: DECIMAL_OR_NULL,
  blobCount: INTEGER,
  blobGasUsed: DECIMAL,
  excessBlobGas: DECIMAL,
  blobBaseFee: DECIMAL,
  blobEthBurnedWei: DECIMAL,
  executionBaseFee: DECIMAL_OR_NULL,
  gasUsed: DECIMAL_OR_NULL,
  gasLimit: DECIMAL_OR_NULL,
  executionEthBurnedWei: DECIMAL_OR_NULL,
  reserveFeeWei: DECIMAL_OR_NULL,
  transactionCount: INTEGER,
  targetBlobsPerBlock: INTEGER,
  maxBlobsPerBlock: INTEGER,
  transformVersion: { type: 'integer', enum: [TRANSFORM_VERSION] },
  finality: { type: 'string', enum: FINALITIES },
};

const TRANSACTION_TYPES: Record<keyof BlobTransaction, PropertySchema> = {
  network: STRING,
  blockNumber: INTEGER,
  blockHash: HASH,
  txHash: HASH,
  senderAddress: ADDRESS,
  blobVersionedHashes: { type: 'array', items: HASH },
  blobCount: INTEGER,
  totalBurnedWei: DECIMAL,
  executionBurnedWei: DECIMAL,
  blobBurnedWei: DECIMAL,
};

const SCHEDULE_TYPES: Record<keyof BlobSchedule, PropertySchema> = {
  name: STRING,
  activationBlock: INTEGER_OR_NULL,
  activationTimestamp: INTEGER,
  forkId: FORK_ID,
  targetBlobsPerBlock: INTEGER,
  maxBlobsPerBlock: INTEGER,
  baseFeeUpdateFraction: DECIMAL,
  eip7918: BOOLEAN,
  source: { type: 'string', enum: BLOB_SCHEDULE_SOURCES },
};

const CHANGE_TYPES: Record<keyof BlobsBlockChange, PropertySchema> = {
  block: { $ref: '#/types/BlobsBlock' },
  transactions: { type: 'array', items: { $ref: '#/types/BlobTransaction' } },
};

/** Properties in the order of `descriptions` (the spec order), each with its type and its definition. */
function objectSchema<K extends string>(description: string, types: Record<K, PropertySchema>, descriptions: Readonly<Record<K, string>>): ObjectSchema {
  const names = Object.keys(descriptions) as K[];
  const properties: Record<string, PropertySchema> = {};
  for (const name of names) properties[name] = { ...types[name], description: descriptions[name] };
  return { type: 'object', description, required: names, additionalProperties: false, properties };
}

export const BLOBS_SCHEMA = Object.freeze({
  processor: BLOBS_PROCESSOR,
  transformVersion: TRANSFORM_VERSION,
  types: {
    BlobsBlock: objectSchema('One block: blob and execution gas, their prices and burns.', BLOCK_TYPES, BLOB_FIELD_DEFINITIONS.BlobsBlock),
    BlobTransaction: objectSchema('One type-3 (blob) transaction and what it burned.', TRANSACTION_TYPES, BLOB_FIELD_DEFINITIONS.BlobTransaction),
    BlobSchedule: objectSchema('Blob parameters of one fork.', SCHEDULE_TYPES, BLOB_FIELD_DEFINITIONS.BlobSchedule),
    BlobsBlockChange: objectSchema('A block and its blob transactions, applied or removed together.', CHANGE_TYPES, BLOB_FIELD_DEFINITIONS.BlobsBlockChange),
  },
  collections: {
    blocks: { entity: 'BlobsBlock', key: '8-byte big-endian block number', order: 'block number' },
    transactions: { entity: 'BlobTransaction', key: '32-byte transaction hash', order: 'block number, then canonical transaction index' },
    schedule: { entity: 'BlobSchedule', key: '8-byte big-endian activation timestamp, then the fork name', order: 'activation' },
  },
  changeKinds: {
    'blobs.block.put': { payload: 'BlobsBlockChange', description: 'One per block: the block and its blob transactions, to upsert together.' },
    'blobs.block.delete': { payload: 'BlobsBlockChange', description: 'The block and its blob transactions as stored, to delete by their keys (a reorg removed them).' },
    'blobs.schedule.put': { payload: 'BlobSchedule', description: 'A schedule row, new or with its activationBlock filled.' },
  },
});
