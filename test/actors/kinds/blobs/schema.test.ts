import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { MAINNET_GENESIS_HASH, MAINNET_GENESIS_TIMESTAMP, MAINNET_SCHEDULE } from '../../../../net/eth/index.js';
import { BLOB_FIELD_DEFINITIONS } from '../../../../actors/kinds/blobs/field-definitions.js';
import { renderChangePayload, renderScheduleRow } from '../../../../actors/kinds/blobs/render.js';
import { scheduleRows } from '../../../../actors/kinds/blobs/schedule.js';
import { BLOBS_PROCESSOR, BLOBS_SCHEMA, type ObjectSchema, type PropertySchema } from '../../../../actors/kinds/blobs/schema.js';
import { transformBlock, type TransformedBlock } from '../../../../actors/kinds/blobs/transform.js';
import { defaultDevnetChain } from './support.js';

type TypeName = keyof typeof BLOBS_SCHEMA.types;

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** The subset of JSON Schema the blob schema uses: type, pattern, minimum, enum, items, $ref, objects. */
function validate(value: unknown, schema: PropertySchema | ObjectSchema, path: string): void {
  if ('$ref' in schema && schema.$ref !== undefined) {
    return validate(value, BLOBS_SCHEMA.types[schema.$ref.replace('#/types/', '') as TypeName], path);
  }
  const types = schema.type === undefined ? [] : [schema.type].flat();
  assert.ok(types.includes(jsonType(value)), `${path}: ${jsonType(value)} is not ${types.join('|')}`);
  if ('enum' in schema && schema.enum !== undefined) assert.ok(schema.enum.includes(value as string), `${path}: ${String(value)} not in enum`);
  if ('pattern' in schema && schema.pattern !== undefined && typeof value === 'string') assert.match(value, new RegExp(schema.pattern), path);
  if ('minimum' in schema && schema.minimum !== undefined && typeof value === 'number') assert.ok(value >= schema.minimum, path);
  if ('items' in schema && schema.items !== undefined && Array.isArray(value)) value.forEach((item, i) => validate(item, schema.items!, `${path}[${i}]`));
  if ('properties' in schema) {
    const record = value as Record<string, unknown>;
    assert.deepEqual(Object.keys(record), schema.required, `${path}: properties`);
    for (const [name, property] of Object.entries(schema.properties)) validate(record[name], property, `${path}.${name}`);
  }
}

describe('blobs processor schema', () => {
  let results: TransformedBlock[];

  before(async () => {
    const chain = await defaultDevnetChain();
    results = chain.blocks.map((b) => transformBlock({ network: 'devnet', schedule: chain.schedule, header: b.block.header, transactions: b.block.transactions, receipts: b.receipts, blockSizeBytes: 1000, finality: 'included' }));
  });

  it('the descriptor names kind, version, change schema, generic API, ordering, collections and change kinds', () => {
    assert.deepEqual(JSON.parse(JSON.stringify(BLOBS_PROCESSOR)), {
      kind: 'blobs',
      version: '1.0.0',
      changeSchema: 'blobs.v1',
      genericApi: 'processor-v1',
      deliveryOrdering: 'block_versioned_idempotent',
      collections: ['blocks', 'transactions', 'schedule'],
      changeKinds: ['blobs.block.put', 'blobs.block.delete', 'blobs.schedule.put'],
    });
    assert.deepEqual(Object.keys(BLOBS_SCHEMA.collections), [...BLOBS_PROCESSOR.collections]);
    assert.deepEqual(Object.keys(BLOBS_SCHEMA.changeKinds), [...BLOBS_PROCESSOR.changeKinds]);
  });

  it('every property is described by its field definition, in definition order', () => {
    for (const [name, type] of Object.entries(BLOBS_SCHEMA.types)) {
      const definitions: Readonly<Record<string, string>> = BLOB_FIELD_DEFINITIONS[name as TypeName];
      assert.deepEqual(Object.keys(type.properties), Object.keys(definitions), name);
      for (const [field, property] of Object.entries(type.properties)) {
        assert.ok((property.description ?? '').length > 10, `${name}.${field}`);
        assert.equal(property.description, definitions[field], `${name}.${field}`);
      }
    }
  });

  it('the schema document is plain JSON', () => {
    assert.deepEqual(JSON.parse(JSON.stringify(BLOBS_SCHEMA)), BLOBS_SCHEMA);
  });

  it('every rendered change payload of the devnet chain validates against BlobsBlockChange', () => {
    for (const result of results) validate(JSON.parse(renderChangePayload(result)), BLOBS_SCHEMA.types.BlobsBlockChange, `block ${result.block.blockNumber}`);
  });

  it('the validator rejects a quantity rendered as a number and a missing property', () => {
    const payload = JSON.parse(renderChangePayload(results[0]!));
    assert.throws(() => validate({ ...payload, block: { ...payload.block, blobBaseFee: 1 } }, BLOBS_SCHEMA.types.BlobsBlockChange, 'mutated'), /blobBaseFee/);
    const { size: _size, ...withoutSize } = payload.block;
    assert.throws(() => validate({ ...payload, block: withoutSize }, BLOBS_SCHEMA.types.BlobsBlockChange, 'mutated'), /properties/);
  });

  it('every mainnet schedule row validates against BlobSchedule', () => {
    for (const row of scheduleRows(MAINNET_SCHEDULE, { hash: MAINNET_GENESIS_HASH, timestamp: MAINNET_GENESIS_TIMESTAMP }, 'chain_spec', () => 1)) {
      validate(JSON.parse(renderScheduleRow(row).toString('utf8')), BLOBS_SCHEMA.types.BlobSchedule, row.name);
    }
  });
});
