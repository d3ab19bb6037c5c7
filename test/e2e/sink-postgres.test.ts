/**
 * The PostgreSQL sink end to end (issue 32): a real node on the devnet (reorgs every 8 blocks), a real PostgreSQL
 * cluster, and `chain-node sink postgres` as a user starts it. The sink bootstraps erc20 and blobs from
 * query-and-follow snapshots, follows across reorgs and finality, and — once the node is frozen (restarted on its
 * store with no live source) and the sink has caught up — every table equals the node's entities at the sink's
 * cursor. Also: typed columns are lossless, /metrics and /health answer, SIGTERM exits 0, and the consumer
 * credential appears in no log line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startNodeProcess } from '../support/node-process.js';
import { startPostgres } from '../support/postgres.js';
import { SINK_CREDENTIAL, startSinkProcess } from '../support/sink-process.js';
import { assertTableEquals, entities, expectedFromEntities, FAST, freeze, headSequence, metric, metricsText, NODE_TOML, startSinkEnvironment, storedCursor, tableRows, waitFor } from './sink-support.js';

const SINK_TOML = ['[[processors]]', 'id = "erc20"', '[[processors]]', 'id = "blobs"', ''].join('\n');

test('the sink bootstraps erc20 and blobs, follows across reorgs, and its tables equal the node\'s entities at its cursor', async (t) => {
  const env = await startSinkEnvironment(t, { toml: NODE_TOML, sets: FAST, processor: 'erc20', minSequence: 40n });
  const { pg, port, baseUrl } = env;

  const sink = await startSinkProcess({ nodeUrl: baseUrl, postgresUrl: pg.url, toml: SINK_TOML });
  t.after(() => sink.stop('SIGKILL'));
  // Following across reorgs and finality, in both processors.
  await waitFor('the sink to apply undo and finalized changes of both processors', async () => {
    sink.assertRunning();
    const text = await metricsText(sink.metricsUrl);
    return ['erc20', 'blobs'].every((processor) => (metric(text, 'chain_node_sink_changes_applied_total', { processor, operation: 'undo' }) ?? 0) > 0
      && (metric(text, 'chain_node_sink_changes_applied_total', { processor, operation: 'finalized' }) ?? 0) > 0
      && metric(text, 'chain_node_sink_state', { processor, state: 'following' }) === 1);
  });
  const running = await metricsText(sink.metricsUrl);
  assert.equal(metric(running, 'chain_node_sink_bootstraps_total', { processor: 'erc20', reason: 'first start' }), 1);
  assert.ok((metric(running, 'chain_node_sink_bootstrap_rows_total', { processor: 'erc20', collection: 'balances' }) ?? 0) > 0, 'erc20 balances came from a snapshot first');
  assert.ok((metric(running, 'chain_node_sink_commit_to_visible_seconds_count', { processor: 'erc20' }) ?? 0) > 0);
  const ready = await fetch(sink.metricsUrl.replace('/metrics', '/health/ready'));
  assert.equal(ready.status, 200, await ready.text());

  // One sink per processor and schema: a second one is refused while the first holds the lock.
  const second = await startSinkProcess({ nodeUrl: baseUrl, postgresUrl: pg.url, toml: SINK_TOML, sets: ['sink.lock_wait_seconds=1', 'metrics.listen='] });
  t.after(() => second.stop('SIGKILL'));
  assert.equal(await second.exited(), 1);
  assert.match(second.output.join('\n'), /another sink holds processor '(erc20|blobs)' in schema 'chain_node' \(PostgreSQL backend pid \d+, application 'chain-node-sink'/);

  env.node = await freeze(env.node, port, NODE_TOML);
  for (const processor of ['erc20', 'blobs']) {
    const head = await headSequence(baseUrl, processor);
    await waitFor(`the ${processor} sink to reach the frozen head ${head}`, async () => (await storedCursor(pg, processor))?.sequence === head);
    await waitFor(`the ${processor} lag to read 0`, async () => metric(await metricsText(sink.metricsUrl), 'chain_node_sink_lag_changes', { processor }) === 0);
  }

  assertTableEquals(await tableRows(pg, 'erc20_balances'), expectedFromEntities(await entities(baseUrl, 'erc20', 'balances')), 'erc20_balances');
  assertTableEquals(await tableRows(pg, 'blobs_blocks'), expectedFromEntities(await entities(baseUrl, 'blobs', 'blocks')), 'blobs_blocks');
  assertTableEquals(await tableRows(pg, 'blobs_transactions'), expectedFromEntities(await entities(baseUrl, 'blobs', 'transactions')), 'blobs_transactions');
  // A schedule row's block hash and finality are read by the node from its activation block's row: only keys, data and block compared.
  assertTableEquals(await tableRows(pg, 'blobs_schedule'), expectedFromEntities(await entities(baseUrl, 'blobs', 'schedule')), 'blobs_schedule', { blockHash: false, finality: false });
  const blocks = await tableRows(pg, 'blobs_blocks');
  assert.ok([...blocks.values()].some((row) => row.finality === 'finalized') && [...blocks.values()].some((row) => row.finality === 'included'), 'both finalities are present');

  // Typed columns are PostgreSQL's own reading of the JSON, lossless.
  const typed = await pg.query<{ bad: string; negative: string; rows: string }>(`SELECT count(*) FILTER (WHERE balance::text <> data->>'balance' OR token <> data->>'token' OR holder <> data->>'address')::text AS bad,
    count(*) FILTER (WHERE balance < 0)::text AS negative, count(*)::text AS rows FROM chain_node.erc20_balances`);
  assert.equal(typed[0]!.bad, '0');
  const fees = await pg.query<{ bad: string }>(`SELECT count(*) FILTER (WHERE blob_base_fee::text <> data->>'blobBaseFee' OR blob_eth_burned_wei::text <> data->>'blobEthBurnedWei' OR block_timestamp <> (data->>'timestamp')::bigint)::text AS bad FROM chain_node.blobs_blocks`);
  assert.equal(fees[0]!.bad, '0');
  const columns = await pg.query<{ column_name: string; data_type: string; numeric_precision: number | null }>(`SELECT column_name, data_type, numeric_precision FROM information_schema.columns WHERE table_schema = 'chain_node' AND table_name = 'erc20_balances' AND column_name IN ('balance', 'token', 'holder', 'data', 'change_sequence') ORDER BY column_name`);
  assert.deepEqual(columns.map((c) => [c.column_name, c.data_type, c.numeric_precision]), [['balance', 'numeric', 78], ['change_sequence', 'bigint', 64], ['data', 'jsonb', null], ['holder', 'text', null], ['token', 'text', null]]);
  const indexes = await pg.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE schemaname = 'chain_node' AND tablename = 'erc20_balances' ORDER BY indexname`);
  assert.deepEqual(indexes.map((i) => i.indexname), ['erc20_balances_block', 'erc20_balances_holder', 'erc20_balances_pkey', 'erc20_balances_token_balance']);

  assert.equal(await sink.stop('SIGTERM'), 0, 'SIGTERM stops the sink cleanly');
  const output = sink.output.join('\n');
  assert.ok(!output.includes(SINK_CREDENTIAL), 'the consumer credential is never logged');
  assert.match(output, /"message":"following the change feed"/);
  for (const line of sink.output) assert.doesNotThrow(() => JSON.parse(line), `a structured log line: ${line}`);
  assert.ok(!env.node.output.join('\n').includes(SINK_CREDENTIAL), 'nor by the node');
});

test('bad sink configurations are refused at start naming the key; a missing processor or collection, or PostgreSQL out of reach, stops with the reason', async (t) => {
  const pg = await startPostgres();
  t.after(() => pg.close());
  const leaked = await startSinkProcess({ nodeUrl: 'http://127.0.0.1:9', postgresUrl: 'postgresql://sink:hunter2-in-toml@127.0.0.1:5432/chain', toml: SINK_TOML });
  assert.equal(await leaked.exited(), 1);
  const refusal = leaked.output.join('\n');
  assert.match(refusal, /config key 'postgres\.url'/);
  assert.match(refusal, /PGPASSWORD/);
  assert.ok(!refusal.includes('hunter2-in-toml'), 'the refused password is not echoed');

  const node = await startNodeProcess({ toml: NODE_TOML, sets: FAST, readyTimeoutMs: 120_000 });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  const missing = await startSinkProcess({ nodeUrl: node.baseUrl, postgresUrl: pg.url, toml: '[[processors]]\nid = "erc21"\n' });
  assert.equal(await missing.exited(), 1);
  assert.match(missing.output.join('\n'), /the node has no processor 'erc21'/);
  const unknownCollection = await startSinkProcess({ nodeUrl: node.baseUrl, postgresUrl: pg.url, toml: '[[processors]]\nid = "erc20"\ncollections = ["allowances"]\n' });
  assert.equal(await unknownCollection.exited(), 1);
  assert.match(unknownCollection.output.join('\n'), /allowances is not a collection of kind 'erc20' \(it has: balances\)/);
  const pgDown = await startSinkProcess({ nodeUrl: node.baseUrl, postgresUrl: 'postgresql://postgres@127.0.0.1:9/postgres', toml: SINK_TOML });
  assert.equal(await pgDown.exited(), 1);
  assert.match(pgDown.output.join('\n'), /cannot prepare PostgreSQL at postgres@127\.0\.0\.1:9\/postgres/);
});
