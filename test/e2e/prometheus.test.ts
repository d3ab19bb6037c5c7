import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../support/paths.js';
import { headSequence, removeDir, startNodeProcess, waitUntil } from '../support/node-process.js';
import { promtool } from '../support/promtool.js';

test('promtool check metrics finds nothing to report in /metrics of a running node', async () => {
  // blobs, and erc20 retaining a window of artifacts: the artifact gauges the alerts read have series.
  // JetStream publication on, its broker unreachable: the publisher's series the alerts read exist all the same.
  const toml = ['[[processors]]', 'id = "blobs"', 'kind = "blobs"', '[[processors]]', 'id = "erc20"', 'kind = "erc20"', 'tokens = "*"', '[processors.artifacts]', 'retention = "window"', 'window_blocks = 8',
    '[delivery.jetstream]', 'enabled = true', 'servers = ["127.0.0.1:1"]', ''].join('\n');
  const node = await startNodeProcess({ toml, sets: ['budgets.outbox.max_bytes=123456789'] });
  try {
    await waitUntil(node, async () => (await headSequence(node)) > 0 && /^chain_node_artifact_bytes\{/m.test(await (await fetch(`${node.baseUrl}/metrics`)).text())
      && /^chain_node_jetstream_publication_lag_seconds\{/m.test(await (await fetch(`${node.baseUrl}/metrics`)).text()), 30_000);
    // Some traffic first, so per-route series and worker registries are in the text too.
    for (const path of ['/v1/status', '/v1/q/blobs/blocks?limit=2', '/v1/nope']) await (await fetch(`${node.baseUrl}${path}`)).arrayBuffer();
    const text = await (await fetch(`${node.baseUrl}/metrics`)).text();
    assert.match(text, /chain_node_http_requests_total/);
    assert.doesNotMatch(text, /^nodejs_active_(handles|requests|resources)_total/m, 'gauges named like counters are gone');
    assert.match(text, /^nodejs_active_handles\{type="[A-Za-z]+"\} \d+/m, 'the per-type counts stay');
    const alertMetrics = new Set(readFileSync(join(PROJECT_ROOT, 'ops', 'alerts.yml'), 'utf8').match(/\bchain_node_[a-z_]+/g));
    assert.ok(alertMetrics.size >= 8);
    for (const name of alertMetrics) assert.match(text, new RegExp(`^${name}(\\{| )`, 'm'), `ops/alerts.yml uses ${name}, which the node exports`);
    // The byte budgets the alerts compare against: the configured ones, and the blobs change log's LMDB bytes.
    assert.match(text, /^chain_node_outbox_budget_bytes 123456789$/m);
    assert.match(text, /^chain_node_jetstream_resets_total\{instance="blobs",reason="epoch_changed"[^}]*\} 0$/m, 'reset counters start at 0');
    assert.match(text, /^chain_node_jetstream_publish_errors_total\{instance="erc20",reason="foreign_publisher"[^}]*\} 0$/m);
    assert.match(text, /^chain_node_pending_delta_budget_bytes 268435456$/m);
    assert.match(text, /^chain_node_artifact_budget_bytes 1073741824$/m);
    assert.match(text, /^chain_node_artifact_bytes\{processor="erc20",state="(retained|pending)"\} \d+$/m);
    assert.ok(Number(/^chain_node_outbox_bytes\{processor="blobs"\} (\d+)$/m.exec(text)?.[1]) > 0, 'the blobs change log takes pages');
    assert.match(text, /^chain_node_pending_delta_bytes\{processor="blobs"\} 0$/m, 'blobs keeps no inverse writes');
    const check = await promtool(['check', 'metrics'], text);
    assert.equal(check.stdout + check.stderr, '', 'promtool reports nothing');
    assert.equal(check.code, 0);
  } finally {
    assert.equal(await node.stop('SIGTERM'), 0);
    removeDir(node.dir);
  }
});

test('a running node gives back its residency of the store map on schedule, and /metrics counts it beside each worker\'s heap', async () => {
  const node = await startNodeProcess({ toml: '' });
  try {
    // The release runs every 10 s on the main thread (store/map-release.ts).
    let text = '';
    await waitUntil(node, async () => {
      text = await (await fetch(`${node.baseUrl}/metrics`)).text();
      return Number(/^chain_node_store_map_releases_total (\d+)$/m.exec(text)?.[1] ?? 0) >= 1;
    }, 60_000);
    assert.match(text, /^chain_node_store_map_released_bytes_total \d+(\.\d+)?(e\+\d+)?$/m);
    assert.match(text, /^chain_node_malloc_trimmed_bytes_total \d+(\.\d+)?(e\+\d+)?$/m);
    assert.ok(Number(/^chain_node_actor_heap_total_bytes\{actor="chain",lane="chain"\} (\d+)$/m.exec(text)?.[1]) > 0, 'the chain worker reports its committed heap');
    assert.match(text, /^chain_node_actor_external_memory_bytes\{actor="chain",lane="chain"\} \d+$/m);
  } finally {
    assert.equal(await node.stop('SIGTERM'), 0);
    removeDir(node.dir);
  }
});
