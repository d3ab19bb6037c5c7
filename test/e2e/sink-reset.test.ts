/**
 * reset_required (issue 32 point 3): the sink's position is pruned from the node's change log while it is stopped
 * (its lease lapsed, `chain-node db prune-changes --keep 0`). With `sink.on_reset = "stop"` the sink exits 1 naming
 * the reason and leaves tables and cursor as they were; with the default "rebootstrap" it snapshots again into
 * fresh tables, swaps them in with the cursor in one transaction, follows on, and its tables equal the node's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, runCli, waitUntil, type NodeProcess } from '../support/node-process.js';
import { freePort } from '../support/ports.js';
import { startPostgres } from '../support/postgres.js';
import { startSinkProcess } from '../support/sink-process.js';
import { assertTableEquals, entities, expectedFromEntities, FAST, freeze, headSequence, metric, metricsText, storedCursor, tableRows, startNodeOn, waitFor } from './sink-support.js';

const NODE_TOML = ['[[processors]]', 'id = "erc20"', 'kind = "erc20"', 'tokens = "*"', ''].join('\n');
const SINK_TOML = '[[processors]]\nid = "erc20"\n';

test('a pruned position: on_reset = "stop" exits and leaves the tables; "rebootstrap" swaps in fresh tables and follows on', async (t) => {
  const pg = await startPostgres();
  t.after(() => pg.close());
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const startNode = (dir?: string) => startNodeOn(port, { toml: NODE_TOML, sets: FAST, ...(dir ? { dir } : {}) });
  let node: NodeProcess = await startNode();
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  await waitUntil(node, async () => (await headSequence(baseUrl, 'erc20')) >= 30n, 120_000);

  const sets = ['consumer.lease_ttl_seconds=2'];
  const first = await startSinkProcess({ nodeUrl: baseUrl, postgresUrl: pg.url, toml: SINK_TOML, sets });
  t.after(() => first.stop('SIGKILL'));
  await waitFor('the sink to bootstrap and follow', async () => {
    first.assertRunning();
    const cursor = await storedCursor(pg, 'erc20');
    return cursor !== null && cursor.sequence > 0n && metric(await metricsText(first.metricsUrl), 'chain_node_sink_state', { processor: 'erc20', state: 'following' }) === 1;
  });
  await waitFor('a few batches', async () => (metric(await metricsText(first.metricsUrl), 'chain_node_sink_transactions_total', { processor: 'erc20' }) ?? 0) >= 3);
  assert.equal(await first.stop('SIGTERM'), 0);
  const stopped = (await storedCursor(pg, 'erc20'))!;
  const oid = async () => (await pg.query<{ oid: string }>(`SELECT 'chain_node.erc20_balances'::regclass::oid::text AS oid`))[0]!.oid;
  const tableBefore = await oid();
  const rowsBefore = await tableRows(pg, 'erc20_balances');

  // The lease lapses (nothing holds the log for the sink any more); the stopped node's change log is pruned.
  await waitFor('the sink\'s lease to lapse', async () => {
    const consumer = await (await fetch(`${baseUrl}/v1/processors/erc20/consumers/postgres-sink`)).json() as { lease: { active: boolean } };
    return !consumer.lease.active;
  });
  assert.equal(await node.stop(), 0);
  const pruned = await runCli(['db', 'prune-changes', '--data-dir', node.dataDir, '--keep', '0']);
  assert.equal(pruned.code, 0, pruned.stderr);
  node = await startNode(node.dir);
  const expired = await fetch(`${baseUrl}/v1/processors/erc20/changes?after=${stopped.cursor}`);
  assert.equal(expired.status, 410, 'the sink\'s position is gone from the log');
  await expired.body?.cancel();

  const stopping = await startSinkProcess({ nodeUrl: baseUrl, postgresUrl: pg.url, toml: SINK_TOML, sets: [...sets, 'sink.on_reset=stop'] });
  t.after(() => stopping.stop('SIGKILL'));
  assert.equal(await stopping.exited(), 1, 'on_reset = "stop" exits 1');
  const reason = stopping.output.join('\n');
  assert.match(reason, /processor 'erc20': the node asks for a new snapshot \((cursor_expired|reset_required)/);
  assert.match(reason, /on_reset = "stop" leaves the tables/);
  assert.deepEqual(await storedCursor(pg, 'erc20'), stopped, 'the cursor is untouched');
  assert.equal(await oid(), tableBefore);
  assert.deepEqual(await tableRows(pg, 'erc20_balances'), rowsBefore, 'the rows are untouched');

  const again = await startSinkProcess({ nodeUrl: baseUrl, postgresUrl: pg.url, toml: SINK_TOML, sets });
  t.after(() => again.stop('SIGKILL'));
  await waitFor('the re-bootstrap', async () => { again.assertRunning(); return (await storedCursor(pg, 'erc20'))?.bootstraps === 2; });
  assert.notEqual(await oid(), tableBefore, 'fresh tables were swapped in');
  await waitFor('the reset to be counted', async () => {
    const text = await metricsText(again.metricsUrl);
    return metric(text, 'chain_node_sink_bootstraps_total', { processor: 'erc20', reason: 'reset_required' }) === 1 && metric(text, 'chain_node_sink_resets_total', { processor: 'erc20' }) === 1;
  });

  node = await freeze(node, port, NODE_TOML);
  const head = await headSequence(baseUrl, 'erc20');
  await waitFor(`the sink to reach the frozen head ${head}`, async () => (await storedCursor(pg, 'erc20'))?.sequence === head);
  assertTableEquals(await tableRows(pg, 'erc20_balances'), expectedFromEntities(await entities(baseUrl, 'erc20', 'balances')), 'erc20_balances after the re-bootstrap');
  assert.equal(await again.stop('SIGTERM'), 0);
});
