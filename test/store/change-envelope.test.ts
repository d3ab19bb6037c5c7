/** The change envelope is rendered by concatenation: byte-identical to JSON.stringify of its fields in spec order. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderEnvelope, type EnvelopeInput } from '../../store/change-envelope.js';

function reference(input: EnvelopeInput): string {
  return JSON.stringify({
    apiVersion: '1', sequence: input.sequence.toString(), cursor: input.cursor, operation: input.operation, originKind: input.originKind ?? 'live', originId: input.originId ?? 'live',
    publicationRevision: '1', chainId: input.chainId, block: input.block, finality: input.finality, kind: input.kind, schema: input.schema, key: input.key,
    data: input.dataJson === null ? null : JSON.parse(input.dataJson), emittedAt: input.emittedAt,
  });
}

test('renderEnvelope equals JSON.stringify of the spec fields, for every operation, with and without a block, key and data', () => {
  const block = { number: 12, hash: `0x${'ab'.repeat(32)}`, parentHash: `0x${'cd'.repeat(32)}`, timestamp: 1_700_000_012 } as const;
  const other = { ...block, number: 13 };
  const inputs: EnvelopeInput[] = [
    { sequence: 1n, cursor: 'AQEAAA_-x', operation: 'apply', chainId: 1, block, finality: 'included', kind: 'erc20.balance.put', schema: 'erc20.v1', key: '01ab', dataJson: '{"balance":"12","quote":"a\\"b"}', emittedAt: '2026-01-01T00:00:00.000Z' },
    { sequence: 2n, cursor: 'AQEAAA', operation: 'undo', chainId: 1337, block, finality: 'included', kind: 'erc20.balance.delete', schema: 'erc20.v1', key: '01cd', dataJson: '{"lastChange":null}', emittedAt: '2026-01-01T00:00:00.000Z' },
    { sequence: 18_446_744_073_709_551_615n, cursor: 'x', operation: 'finalized', chainId: 1, block: other, finality: 'finalized', kind: 'k', schema: 's\u00e9\n', key: null, dataJson: null, emittedAt: 'now' },
    { sequence: 3n, cursor: 'y', operation: 'reset_required', chainId: 1, block: null, finality: 'included', kind: 'reset', schema: 'x.v1', key: null, dataJson: null, emittedAt: 'now' },
    { sequence: 4n, cursor: 'z', operation: 'apply', chainId: 1, block, finality: 'included', kind: 'k', schema: 'x.v1', key: 'same block again', dataJson: '[1,2]', emittedAt: 'now' },
  ];
  for (const input of inputs) assert.equal(renderEnvelope(input), reference(input));
});

test('renderEnvelope: consecutive changes of one block that differ in one field each render that field (the shared fields are rendered once)', () => {
  const block = { number: 12, hash: `0x${'ab'.repeat(32)}`, parentHash: `0x${'cd'.repeat(32)}`, timestamp: 1_700_000_012 } as const;
  const base: EnvelopeInput = { sequence: 1n, cursor: 'c', operation: 'apply', chainId: 1, block, finality: 'included', kind: 'erc20.balance.put', schema: 'erc20.v1', key: '01ab', dataJson: '{"a":1}', emittedAt: 'now' };
  const inputs: EnvelopeInput[] = [
    base, { ...base, sequence: 2n, key: '01cd' }, { ...base, finality: 'finalized' }, { ...base, kind: 'erc20.balance.delete' }, { ...base, schema: 'erc20.v2' },
    { ...base, operation: 'undo' }, { ...base, chainId: 5 }, { ...base, originKind: 'historical_backfill', originId: 'sub-1' }, { ...base, originKind: 'historical_backfill', originId: 'sub-2' },
    { ...base, block: { ...block } }, { ...base, block: { ...block, number: 13 } }, { ...base, emittedAt: 'later' }, { ...base, block: null }, base,
  ];
  for (const input of inputs) assert.equal(renderEnvelope(input), reference(input));
});
