/**
 * The sink follows through a relay (issue 32 point 1: "it works against the node or a relay"): snapshots and
 * processor status from the node (`node.url`), the durable consumer at a relay (`node.follow_url`) serving the
 * node's feed from a real nats-server. The consumer is the relay's (not the node's), the sink follows across
 * reorgs, and its table equals the fold of the node's change log at the cursor PostgreSQL holds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startNodeProcess, waitUntil } from '../support/node-process.js';
import { startNatsServer } from '../support/nats-server.js';
import { startPostgres } from '../support/postgres.js';
import { relayJetstreamToml, startRelayProcess } from '../support/relay-process.js';
import { startSinkProcess } from '../support/sink-process.js';
import { assertTableEquals, changesThrough, FAST, foldErc20, headSequence, metric, metricsText, readAtCursor, waitFor } from './sink-support.js';

const STREAM = 'SINKCHANGES';
const PREFIX = 'sink';

test('a sink whose consumer lives at a relay bootstraps from the node, follows through the relay, and equals the node\'s log at its cursor', async (t) => {
  const [server, pg] = await Promise.all([startNatsServer(), startPostgres()]);
  t.after(() => Promise.all([server.close(), pg.close()]));
  const node = await startNodeProcess({
    toml: `[delivery.jetstream]\nenabled = true\nservers = ["${server.url}"]\nstream = "${STREAM}"\nsubject_prefix = "${PREFIX}"\n[[processors]]\nid = "erc20"\nkind = "erc20"\ntokens = "*"\n`,
    sets: FAST, readyTimeoutMs: 120_000,
  });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  const relay = await startRelayProcess({ dir: node.dir, toml: relayJetstreamToml([server.url], STREAM, PREFIX) });
  t.after(() => relay.stop('SIGKILL'));
  await waitUntil(node, async () => (await headSequence(relay.baseUrl, 'erc20')) >= 40n, 120_000);

  const sink = await startSinkProcess({ nodeUrl: node.baseUrl, postgresUrl: pg.url, toml: '[[processors]]\nid = "erc20"\n', sets: [`node.follow_url=${relay.baseUrl}`] });
  t.after(() => sink.stop('SIGKILL'));
  await waitFor('the sink to follow undo and finalized changes through the relay', async () => {
    sink.assertRunning();
    const text = await metricsText(sink.metricsUrl);
    return (metric(text, 'chain_node_sink_changes_applied_total', { processor: 'erc20', operation: 'undo' }) ?? 0) > 0
      && (metric(text, 'chain_node_sink_changes_applied_total', { processor: 'erc20', operation: 'finalized' }) ?? 0) > 0;
  });
  const atRelay = await fetch(`${relay.baseUrl}/v1/processors/erc20/consumers/postgres-sink`);
  assert.equal(atRelay.status, 200, 'the consumer lives at the relay');
  await atRelay.body?.cancel();
  const atNode = await fetch(`${node.baseUrl}/v1/processors/erc20/consumers/postgres-sink`);
  assert.equal(atNode.status, 404, 'not at the node');
  await atNode.body?.cancel();

  assert.equal(await sink.stop('SIGTERM'), 0);
  const { sequence, rows } = await readAtCursor(pg, 'erc20', 'erc20_balances');
  assertTableEquals(rows, foldErc20(await changesThrough(node.baseUrl, 'erc20', sequence)), `erc20_balances at sequence ${sequence}`);
});
