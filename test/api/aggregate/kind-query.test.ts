/**
 * A user's kind serves a typed query extension through the SDK's query surface alone (issue 29 point 1): its module
 * imports only types, and every parameter, reply and error comes through the QueryRequest the API hands it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadKindModule } from '../../../actors/kinds/custom-kind.js';
import { kindInfo } from '../../../actors/kinds/registry.js';
import type { ConfiguredProcessor } from '../../../api/aggregate/configured-processors.js';
import { BLOBS, getJson, startListener, type ErrorShape } from './listener-fixture.js';

const HOLDERS_KIND = `
import type { QueryExtension, QueryRequest } from 'chain-data-node/sdk';

const ZERO = '0x' + '00'.repeat(20);

function holder(request: QueryRequest) {
  const address = request.path.address('holder');
  const atBlock = request.query.optionalBlockNumber('atBlock');
  const limit = request.query.pageLimit();
  if (address === ZERO) throw request.error('not_found', 'the zero address holds nothing', { holder: address });
  return request.json(Buffer.from(JSON.stringify({ holder: address, atBlock: atBlock ?? null, limit, processor: request.processor.id, covered: request.coverage().available.length })));
}

const HOLDERS: QueryExtension = { name: 'holders', endpoints: [{ path: '/holders/:holder', handle: holder }] };

export default {
  name: 'holders', version: '1.0.0', sdk: '^1.0.0', ordering: 'block_local', needs: { bodies: false, receipts: false },
  changeSchema: 'holders.v1', finalizedKind: 'holders.finalized', queryExtensions: [HOLDERS],
  apply: () => [], undo: () => [], finalize: () => {},
};
`;

test("a user's kind answers its typed query routes through the SDK's QueryRequest: typed parameters, replies and the spec's errors", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-kind-query-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const module = join(dir, 'holders.ts');
  writeFileSync(module, HOLDERS_KIND);
  const kind = await loadKindModule(module, dir);
  const holders: ConfiguredProcessor = { id: 'holders', kind: kind.name, instance: 'holders@1', output: 'entities', delivery: true, startBlock: null, info: kindInfo(kind), module };
  const node = await startListener(t, async () => {}, { processors: [BLOBS, holders] });
  const mixed = `0x${'Ab'.repeat(20)}`;

  const ok = await getJson<Record<string, unknown>>(node.base, `/v1/q/holders/holders/${mixed}?atBlock=7`);
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.body, { holder: mixed.toLowerCase(), atBlock: 7, limit: 10, processor: 'holders', covered: 0 });
  const canonical = await getJson(node.base, `/v1/processors/holders/query/holders/holders/${mixed}?atBlock=7`);
  assert.equal(canonical.text, ok.text, 'the canonical base serves what the alias does');

  const badAddress = await getJson<ErrorShape>(node.base, '/v1/q/holders/holders/0x1234');
  assert.equal(badAddress.status, 400);
  assert.deepEqual([badAddress.body.error.code, badAddress.body.error.message, badAddress.body.error.details], ['invalid_request', "path parameter 'holder' must be a 0x-prefixed 20-byte hex address", { parameter: 'holder', value: '0x1234' }]);
  const badBlock = await getJson<ErrorShape>(node.base, `/v1/q/holders/holders/${mixed}?atBlock=-1`);
  assert.deepEqual([badBlock.status, badBlock.body.error.code, badBlock.body.error.details], [400, 'invalid_request', { parameter: 'atBlock' }]);
  const tooMany = await getJson<ErrorShape>(node.base, `/v1/q/holders/holders/${mixed}?limit=51`);
  assert.deepEqual([tooMany.status, tooMany.body.error.code], [413, 'query_too_expensive']);
  const zero = await getJson<ErrorShape>(node.base, `/v1/q/holders/holders/0x${'00'.repeat(20)}`);
  assert.deepEqual([zero.status, zero.body.error.code, zero.body.error.retryable, zero.body.error.details], [404, 'not_found', false, { holder: `0x${'00'.repeat(20)}` }]);
});
