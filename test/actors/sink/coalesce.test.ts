/**
 * A sink that is behind applies the batches it has read ahead together: several consumer batches in one PostgreSQL
 * transaction (up to `sink.max_transaction_changes`), each change once. Against a real PostgreSQL and the bench's
 * synthetic erc20 feed (it serves the routes the sink uses, shaped as the node's), with 5,000 changes waiting
 * behind the snapshot while another session holds the table (so the sink's transaction waits as it reads ahead).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startErc20Feed } from '../../../bench/load/erc20-feed-server.js';
import { startPostgres } from '../../support/postgres.js';
import { startSinkProcess } from '../../support/sink-process.js';
import { metric, metricsText, waitFor } from '../../e2e/sink-support.js';

const BATCH = 250;
const MAX_TRANSACTION = 2_500;

test('a sink behind the feed lands several batches in one transaction, up to sink.max_transaction_changes', async (t) => {
  const postgres = await startPostgres();
  const feed = await startErc20Feed({ rows: 640 });
  const closing: Array<() => Promise<unknown>> = [() => feed.close(), () => postgres.close()];
  // Closed in reverse order of opening: the sink and the blocking session before the feed and the server.
  t.after(async () => {
    for (const close of closing) await close().catch(() => undefined);
  });
  const boundary = feed.head();
  const sink = await startSinkProcess({
    nodeUrl: feed.baseUrl, postgresUrl: postgres.url,
    toml: ['[[processors]]', 'id = "erc20"', ''].join('\n'),
    sets: ['postgres.schema=coalesce', `consumer.batch_changes=${BATCH}`, `sink.max_transaction_changes=${MAX_TRANSACTION}`],
  });
  closing.unshift(() => sink.stop());
  const labels = { processor: 'erc20' };
  const applied = async () => {
    sink.assertRunning();
    return metric(await metricsText(sink.metricsUrl), 'chain_node_sink_applied_sequence', labels);
  };
  await waitFor('the sink to bootstrap and follow', async () => (await applied()) === boundary);
  // The sink falls behind: another session holds the table, so its first transaction waits while it reads ahead.
  const blocker = await postgres.client();
  closing.unshift(() => blocker.end());
  await blocker.query('BEGIN');
  await blocker.query('LOCK TABLE coalesce.erc20_balances IN EXCLUSIVE MODE');
  // 20 blocks of 250 changes (a few deletes among them), as a node's history backfill emits them.
  const head = feed.appendBlocks(20, 'backfill');
  const changes = head - boundary;
  assert.equal(changes, 5_000);
  await waitFor('the sink to read ahead to its limit behind the waiting transaction', async () => feed.served() >= BATCH + MAX_TRANSACTION);
  await blocker.query('COMMIT');
  await waitFor('the sink to apply every change', async () => (await applied()) === head);
  const text = await metricsText(sink.metricsUrl);
  const transactions = metric(text, 'chain_node_sink_transactions_total', labels)!;
  assert.equal(metric(text, 'chain_node_sink_changes_applied_total', { ...labels, operation: 'apply' }), changes, 'each change applied once');
  assert.equal(metric(text, 'chain_node_sink_changes_skipped_total', labels) ?? 0, 0);
  const batches = changes / BATCH;
  assert.ok(transactions < batches, `${transactions} transactions for ${batches} batches: the batches read ahead share transactions`);
  assert.ok(transactions >= changes / MAX_TRANSACTION, `${transactions} transactions: none holds more than ${MAX_TRANSACTION} changes`);
  const [cursor] = await postgres.query(`SELECT sequence::text AS sequence FROM coalesce.sink_cursors WHERE processor = 'erc20'`);
  assert.equal(cursor!.sequence, String(head), 'the stored cursor is the last change');
  const [rows] = await postgres.query(`SELECT count(*)::int AS n, max(change_sequence)::text AS last FROM coalesce.erc20_balances WHERE change_sequence > ${boundary}`);
  assert.ok(rows!.n > 0 && BigInt(rows!.last) <= BigInt(head), `rows written by the followed changes: ${JSON.stringify(rows)}`);
});
