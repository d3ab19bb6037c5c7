import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ERROR_TABLE, errorBody, HttpError } from '../../api/errors.js';
import { CodedError } from '../../runtime/errors.js';

test('every spec error code maps to the status of spec §7.2', () => {
  const expected: Record<string, number> = {
    invalid_request: 400, cursor_invalid: 400, range_incomplete: 409, processor_rebuilding: 409, delivery_disabled: 409,
    cursor_expired: 410, reset_required: 410, query_too_expensive: 413, unsupported_capability: 422,
    source_unavailable: 503, finality_unavailable: 503, internal: 500, output_not_retained: 409,
  };
  for (const [code, status] of Object.entries(expected)) assert.equal(ERROR_TABLE[code as keyof typeof ERROR_TABLE].status, status, code);
  assert.equal(ERROR_TABLE.delivery_disabled.retryable, false, 'delivery_disabled is non-retryable (§7.2 rule 2)');
});

test('error bodies have the spec shape and never leak unexpected error text', () => {
  const coded = errorBody(new CodedError('range_incomplete', 'blocks 5..9 missing', { requested: { fromBlock: 5, toBlock: 9 } }), 'req-1');
  assert.equal(coded.status, 409);
  assert.deepEqual(coded.body, { error: { code: 'range_incomplete', message: 'blocks 5..9 missing', retryable: false, details: { requested: { fromBlock: 5, toBlock: 9 } }, requestId: 'req-1' } });
  const budget = errorBody(new HttpError('query_too_expensive', 'too many scans', undefined, 429), 'req-2');
  assert.equal(budget.status, 429);
  assert.equal(budget.body.error.retryable, true, 'a concurrency budget excess is worth retrying');
  const internal = errorBody(new Error('secret database path /x/y'), 'req-3');
  assert.equal(internal.status, 500);
  assert.equal(internal.body.error.code, 'internal');
  assert.ok(!internal.body.error.message.includes('/x/y'));
});
