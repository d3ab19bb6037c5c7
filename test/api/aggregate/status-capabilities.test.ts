import { test } from 'node:test';
import assert from 'node:assert/strict';
import { epochToHex } from '../../../store/meta.js';
import { BLOBS_PROCESSOR } from '../../../actors/kinds/blobs/schema.js';
import { BLOBS, getJson, startListener, type ErrorShape } from './listener-fixture.js';
import { blobsBlock, seedBlocks, setProgress, hash32 } from './store-fixture.js';

interface Coverage {
  chainId: number;
  available: Array<{ fromBlock: number; toBlock: number; finality: string }>;
  configuredStartBlock: number;
  liveHeadBlock: number | null;
  processedThrough: number | null;
  finalizedThrough: number | null;
  complete: boolean;
  state: string;
  requested?: unknown;
}

const SECOND: typeof BLOBS = { id: 'blobs-archive', kind: 'blobs', instance: 'blobs-archive@1', output: 'none', delivery: false, startBlock: 5, info: BLOBS.info };

async function seedCovered(temp: { store: import('../../../store/store.js').Store }): Promise<void> {
  await seedBlocks(temp.store, BLOBS.instance, [10, 11, 12, 13, 15].map((n) => ({ block: blobsBlock(n) })));
  await setProgress(temp.store, BLOBS.instance, { finalizedNumber: 11, configuredStartBlock: 10, state: 'live' });
}

test('/v1/status reports chain, store epoch, live head and every processor with its coverage', async (t) => {
  const node = await startListener(t, seedCovered, { processors: [BLOBS, SECOND] });
  const { status, body } = await getJson<{
    apiVersion: string; chainId: number; network: string; storeEpoch: string; head: { number: number; hash: string };
    processors: Array<{ processor: { id: string; instance: string }; coverage: Coverage }>;
  }>(node.base, '/v1/status');
  assert.equal(status, 200);
  assert.equal(body.apiVersion, '1');
  assert.equal(body.chainId, 1337);
  assert.equal(body.network, 'devnet');
  assert.equal(body.storeEpoch, epochToHex(node.temp.store.epoch));
  assert.deepEqual(body.head, { number: 15, hash: hash32(15) });
  assert.deepEqual(body.processors.map((p) => [p.processor.id, p.processor.instance, p.coverage.state]), [['blobs', 'blobs@1', 'live'], ['blobs-archive', 'blobs-archive@1', 'starting']]);
  const archive = body.processors[1]!.coverage;
  assert.deepEqual(archive.available, [], 'an instance whose lane never wrote reads as empty');
  assert.equal(archive.configuredStartBlock, 5, 'the configured start block is reported before the lane records it');
});

test('/v1/processors/{p}/status is ProcessorCoverage split at gaps and at the finality boundary', async (t) => {
  const node = await startListener(t, seedCovered);
  const { status, body } = await getJson<{ processor: { id: string; kind: string; version: string }; coverage: Coverage }>(node.base, '/v1/processors/blobs/status');
  assert.equal(status, 200);
  assert.equal(body.processor.kind, 'blobs');
  assert.equal(body.processor.version, BLOBS_PROCESSOR.version);
  assert.deepEqual(body.coverage, {
    chainId: 1337,
    available: [{ fromBlock: 10, toBlock: 11, finality: 'finalized' }, { fromBlock: 12, toBlock: 13, finality: 'included' }, { fromBlock: 15, toBlock: 15, finality: 'included' }],
    configuredStartBlock: 10, historicalTargetBlock: null, liveHeadBlock: 15, processedThrough: 13, finalizedThrough: 11, complete: true, state: 'live',
  });
  const list = await getJson<{ data: Array<{ processor: { id: string }; coverage: Coverage }> }>(node.base, '/v1/processors');
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.data.map((p) => p.processor.id), ['blobs']);
  assert.deepEqual(list.body.data[0]!.coverage, body.coverage);
});

test('/v1/processors/{p}/schema documents every blob record with its field definitions', async (t) => {
  const node = await startListener(t, seedCovered);
  const { status, body } = await getJson<{ processor: { id: string; changeSchema: string }; types: Record<string, { properties: Record<string, { description?: string }> }> }>(node.base, '/v1/processors/blobs/schema');
  assert.equal(status, 200);
  assert.equal(body.processor.id, 'blobs');
  assert.equal(body.processor.changeSchema, 'blobs.v1');
  assert.deepEqual(Object.keys(body.types).sort(), ['BlobSchedule', 'BlobTransaction', 'BlobsBlock', 'BlobsBlockChange']);
  assert.match(body.types.BlobsBlock!.properties.blobEthBurnedWei!.description ?? '', /blobGasUsed/);
});

test('an unknown processor is 404 not_found in the spec error shape on every processor route', async (t) => {
  const node = await startListener(t, seedCovered);
  for (const path of ['/status', '/schema', '/changes', '/changes/head', '/stream', '/query/blobs/blocks']) {
    const { status, body } = await getJson<ErrorShape>(node.base, `/v1/processors/nope${path}`);
    assert.equal(status, 404, path);
    assert.equal(body.error.code, 'not_found', path);
    assert.equal(body.error.retryable, false);
    assert.match(body.error.requestId, /^[0-9a-f-]{36}$/);
  }
});

test('/v1/capabilities reports the configured processors, query extensions and JSON-RPC methods', async (t) => {
  const node = await startListener(t, seedCovered);
  const { status, body } = await getJson<{
    chainId: number; ethereumRpc: { http: string; webSocket: string; methods: Record<string, { supported: boolean; reason?: string; recent: boolean; historical: unknown }> };
    processors: unknown[]; queryExtensions: unknown[];
  }>(node.base, '/v1/capabilities');
  assert.equal(status, 200);
  assert.equal(body.chainId, 1337);
  assert.equal(body.ethereumRpc.http, 'http://127.0.0.1:8545');
  assert.equal(body.ethereumRpc.webSocket, 'ws://127.0.0.1:8546');
  for (const [name, method] of Object.entries(body.ethereumRpc.methods)) {
    assert.equal(method.supported, false, `${name}: no JSON-RPC listener runs in this build`);
    assert.equal(typeof method.reason, 'string', name);
  }
  assert.equal(body.ethereumRpc.methods.eth_getBalance?.reason, 'evm_state_unavailable');
  assert.ok(body.ethereumRpc.methods.eth_getBlockByNumber);
  assert.deepEqual(body.processors, [{
    id: 'blobs', instance: 'blobs@1', version: BLOBS_PROCESSOR.version, genericApi: 'processor-v1', changeSchema: 'blobs.v1', queryExtensions: ['blobs'],
    subscriptions: true, artifactRetention: 'none', deliveryOrdering: 'block_versioned_idempotent',
  }]);
  assert.deepEqual(body.queryExtensions, [{ processor: 'blobs@1', id: 'blobs', basePath: '/v1/processors/blobs/query/blobs', aliasPath: '/v1/q/blobs' }]);
});

test('with two blobs instances no alias is listed or served, and each canonical path serves its own instance', async (t) => {
  const node = await startListener(t, seedCovered, { processors: [BLOBS, SECOND] });
  const { body } = await getJson<{ processors: Array<{ id: string; subscriptions: boolean }>; queryExtensions: Array<Record<string, string>> }>(node.base, '/v1/capabilities');
  assert.deepEqual(body.processors.map((p) => [p.id, p.subscriptions]), [['blobs', true], ['blobs-archive', false]]);
  assert.deepEqual(body.queryExtensions, [
    { processor: 'blobs@1', id: 'blobs', basePath: '/v1/processors/blobs/query/blobs' },
    { processor: 'blobs-archive@1', id: 'blobs', basePath: '/v1/processors/blobs-archive/query/blobs' },
  ]);
  assert.equal((await fetch(`${node.base}/v1/q/blobs/blocks`)).status, 404, 'the short alias is not installed');
  assert.equal((await fetch(`${node.base}/v1/processors/blobs/query/blobs/blocks`)).status, 200);
  assert.equal((await getJson<ErrorShape>(node.base, '/v1/processors/blobs-archive/query/blobs/blocks')).body.error.code, 'output_not_retained');
});

test('a replay target claims no alias: with the blobs instance and its replay target, /v1/q/blobs is the live instance\'s and the target keeps its base path', async (t) => {
  const replayTarget: typeof BLOBS = { ...SECOND, id: 'blobs-replay', instance: 'blobs-replay@1', artifacts: { retention: 'none', windowBlocks: 0, replayFrom: 'blobs', maxBytes: 0, maxPendingBlocks: 0 } };
  const node = await startListener(t, seedCovered, { processors: [BLOBS, replayTarget] });
  const { body } = await getJson<{ queryExtensions: Array<Record<string, string>> }>(node.base, '/v1/capabilities');
  assert.deepEqual(body.queryExtensions, [
    { processor: 'blobs@1', id: 'blobs', basePath: '/v1/processors/blobs/query/blobs', aliasPath: '/v1/q/blobs' },
    { processor: 'blobs-replay@1', id: 'blobs', basePath: '/v1/processors/blobs-replay/query/blobs' },
  ]);
  const [alias, canonical] = await Promise.all(['/v1/q/blobs/blocks', '/v1/processors/blobs/query/blobs/blocks'].map(async (path) => (await fetch(`${node.base}${path}`)).text()));
  assert.equal(alias, canonical, 'the alias serves the live instance');
});
