/**
 * The PostgreSQL sink lands a user's kind (issue 32: "any processor's collections"): the example custom kind
 * `examples/gas-stats` on the devnet (reorgs every 8 blocks), its collection declared in sink.toml
 * (`[[processors.mapping]]`: put and delete change kinds, where the row JSON holds its block and finality, typed
 * columns and an index). Once the node is frozen and the sink caught up, the table equals the node's entities; the
 * typed columns are PostgreSQL's reading of the JSON. Without a declared mapping the kind is refused, naming the key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { startSinkProcess } from '../support/sink-process.js';
import { assertTableEquals, entities, expectedFromEntities, FAST, freeze, headSequence, metric, metricsText, startSinkEnvironment, storedCursor, tableRows, waitFor } from './sink-support.js';

const EXAMPLE = fileURLToPath(new URL('../../../examples/gas-stats/index.ts', import.meta.url));
const NODE_TOML = ['[[processors]]', 'id = "gas"', 'kind = "custom"', `module = ${JSON.stringify(EXAMPLE)}`, ''].join('\n');
const SINK_TOML = [
  '[[processors]]', 'id = "gas"',
  '[[processors.mapping]]', 'collection = "blocks"', 'put = "gas_stats.block.put"', 'delete = "gas_stats.block.delete"',
  'block_number = "blockNumber"', 'block_hash = "blockHash"', 'finality = "finality"',
  'columns = [{ name = "gas_used", type = "numeric(78,0)", field = "gasUsed" }, { name = "congested", type = "boolean", field = "congested" }, { name = "tx_count", type = "integer", field = "transactionCount" }]',
  'indexes = ["gas_used"]', '',
].join('\n');

test('a user\'s kind lands through the mapping sink.toml declares, equal to the node\'s entities across reorgs and finality; without one it is refused', async (t) => {
  const env = await startSinkEnvironment(t, { toml: NODE_TOML, sets: FAST, processor: 'gas', minSequence: 20n });
  const { pg, port, baseUrl } = env;

  const refused = await startSinkProcess({ nodeUrl: baseUrl, postgresUrl: pg.url, toml: '[[processors]]\nid = "gas"\n', sets: ['metrics.listen='] });
  t.after(() => refused.stop('SIGKILL'));
  assert.equal(await refused.exited(), 1);
  assert.match(refused.output.join('\n'), /kind 'gas_stats'.*no built-in mapping.*\[\[processors\.mapping\]\]/);

  const sink = await startSinkProcess({ nodeUrl: baseUrl, postgresUrl: pg.url, toml: SINK_TOML });
  t.after(() => sink.stop('SIGKILL'));
  await waitFor('the sink to apply undo and finalized changes of the custom kind', async () => {
    sink.assertRunning();
    const text = await metricsText(sink.metricsUrl);
    return (metric(text, 'chain_node_sink_changes_applied_total', { processor: 'gas', operation: 'undo' }) ?? 0) > 0
      && (metric(text, 'chain_node_sink_changes_applied_total', { processor: 'gas', operation: 'finalized' }) ?? 0) > 0;
  });

  env.node = await freeze(env.node, port, NODE_TOML);
  const head = await headSequence(baseUrl, 'gas');
  await waitFor(`the sink to reach the frozen head ${head}`, async () => (await storedCursor(pg, 'gas'))?.sequence === head);
  const rows = await tableRows(pg, 'gas_blocks');
  assertTableEquals(rows, expectedFromEntities(await entities(baseUrl, 'gas', 'blocks')), 'gas_blocks');
  assert.ok([...rows.values()].some((row) => row.finality === 'finalized') && [...rows.values()].some((row) => row.finality === 'included'), 'both finalities are present');

  const typed = await pg.query<{ bad: string; rows: string }>(`SELECT count(*) FILTER (WHERE gas_used::text <> data->>'gasUsed' OR congested <> (data->>'congested')::boolean OR tx_count <> (data->>'transactionCount')::int)::text AS bad, count(*)::text AS rows FROM chain_node.gas_blocks`);
  assert.equal(typed[0]!.bad, '0');
  const indexes = await pg.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE schemaname = 'chain_node' AND tablename = 'gas_blocks' ORDER BY indexname`);
  assert.deepEqual(indexes.map((i) => i.indexname), ['gas_blocks_block', 'gas_blocks_gas_used', 'gas_blocks_pkey']);
  assert.equal(await sink.stop('SIGTERM'), 0);
});
