import { test } from 'node:test';
import assert from 'node:assert/strict';
import { literal, prepareTransaction } from '../../../actors/sink/page-apply.js';
import { ERC20_MAPPING } from '../../../actors/sink/mappings/erc20.js';
import type { PagePlan, TableOps } from '../../../actors/sink/page-plan.js';

test('a dollar-quoted literal takes a tag its text does not hold', () => {
  const json = JSON.stringify({ a: 'it\'s "q" \\' });
  assert.equal(literal(json), '$j$' + json + '$j$', 'quotes and backslashes stay as they are');
  assert.equal(literal('x $j$ y'), '$j1$x $j$ y$j1$');
  assert.equal(literal('$j$ $j1$'), '$j2$$j$ $j1$$j2$');
});

test('a plan becomes its statements and COMMIT, the finality UPDATE bounded below by the table\'s finalized block', () => {
  const ops: TableOps = {
    upserts: new Map([['k1', { key: 'k1', data: { balance: '5', note: "it's" }, blockNumber: 7, blockHash: '0xab', finality: 'included', sequence: '12' }]]),
    deletes: new Set(['k2']),
    finalizedFrom: 3,
    finalizedThrough: 5,
  };
  const plan: PagePlan = { tables: new Map([['balances', ops]]), finalized: new Map([['balances', 5]]), last: { sequence: 12n, cursor: 'c12' }, applied: 3, skipped: 0, operations: { apply: 2, undo: 0, finalized: 1 }, emittedAt: [] };
  const table = { collection: 'balances', mapping: ERC20_MAPPING.collections[0]!, schema: 's', name: 'erc20_balances' };
  const prepared = prepareTransaction(new Map([['balances', table]]), plan)!;
  const statements = prepared.text.split(';\n');
  assert.equal(statements.length, 4);
  assert.match(statements[0]!, /^UPDATE "s"\."erc20_balances" SET finality = 'finalized', data = jsonb_set\(.*WHERE block_number > 3 AND block_number <= 5 /);
  assert.match(statements[1]!, /^DELETE FROM "s"\."erc20_balances" WHERE key IN \(SELECT jsonb_array_elements_text\(\$j\$\["k2"\]\$j\$::jsonb\)\)$/);
  assert.ok(statements[2]!.includes(`$j$[{"k":"k1","d":{"balance":"5","note":"it's"},"n":7,"h":"0xab","f":"included","s":12}]$j$`), statements[2]);
  assert.equal(statements[3], 'COMMIT');
  assert.deepEqual(prepared.to, { sequence: 12n, cursor: 'c12' });
  assert.equal(prepareTransaction(new Map([['balances', table]]), { ...plan, last: null }), null, 'a batch of replays runs nothing');
});

test('against PostgreSQL: values holding quotes, backslashes, dollar tags and SQL land as they are; a moved cursor or a failing statement rolls everything back', async (t) => {
  const { startPostgres } = await import('../../support/postgres.js');
  const { createTableStatement, indexStatements } = await import('../../../actors/sink/tables.js');
  const { ensureCursorTable, writeCursor, readCursor } = await import('../../../actors/sink/cursor-store.js');
  const { runTransaction, CursorMovedError } = await import('../../../actors/sink/page-apply.js');
  const server = await startPostgres();
  const client = await server.client().catch(async (error: unknown) => {
    await server.close();
    throw error;
  });
  t.after(async () => {
    await client.end();
    await server.close();
  });
  const mapping = ERC20_MAPPING.collections[0]!;
  await ensureCursorTable(client, 's');
  await client.query(createTableStatement('s', 'erc20_balances', mapping));
  for (const statement of indexStatements('s', 'erc20_balances', mapping)) await client.query(statement);
  const collections = { balances: { table: 'erc20_balances', boundary: '10', finalizedBlock: null } };
  await writeCursor(client, 's', { processor: 'erc20', instance: 'erc20', kind: 'erc20', consumer: 'c', sequence: 10n, cursor: 'c10', collections, bootstraps: 1 });
  const hostile = `it's $j$ $j1$ \\' '); DROP TABLE s.sink_cursors; -- \\\\ "q" ü`;
  const data = { token: hostile, address: '0x01', balance: '123456789012345678901234567890', finality: 'included' };
  const ops: TableOps = { upserts: new Map([['k1', { key: 'k1', data, blockNumber: 7, blockHash: '0xab', finality: 'included', sequence: '11' }]]), deletes: new Set([hostile]), finalizedFrom: -1, finalizedThrough: null };
  // The node's cursors are opaque: one holding the guard's own quoting lands as it is.
  const plan: PagePlan = { tables: new Map([['balances', ops]]), finalized: new Map(), last: { sequence: 11n, cursor: `c11 ${hostile}` }, applied: 1, skipped: 0, operations: { apply: 1, undo: 0, finalized: 0 }, emittedAt: [] };
  const tables = new Map([['balances', { collection: 'balances', mapping, schema: 's', name: 'erc20_balances' }]]);
  await runTransaction(client, 's', 'erc20', prepareTransaction(tables, plan)!, 10n, collections);
  const rows = (await client.query('SELECT key, data, token, balance::text AS balance, change_sequence::text AS sequence FROM s.erc20_balances')).rows;
  assert.deepEqual(rows, [{ key: 'k1', data, token: hostile, balance: '123456789012345678901234567890', sequence: '11' }]);
  assert.equal((await readCursor(client, 's', 'erc20'))!.sequence, 11n);
  assert.equal((await readCursor(client, 's', 'erc20'))!.cursor, `c11 ${hostile}`);

  // The same plan again: the cursor is at 11, not 10 — refused, nothing written.
  await assert.rejects(runTransaction(client, 's', 'erc20', prepareTransaction(tables, plan)!, 10n, collections), CursorMovedError);
  assert.equal((await client.query('SELECT count(*)::int AS n FROM s.erc20_balances')).rows[0].n, 1, 'nothing written');
  // A statement that fails (a balance that is no number) rolls back the cursor move with it.
  const bad: PagePlan = { ...plan, tables: new Map([['balances', { ...ops, deletes: new Set<string>(), upserts: new Map([['k2', { key: 'k2', data: { ...data, balance: 'NaN?' }, blockNumber: 8, blockHash: '0xcd', finality: 'included', sequence: '12' }]]) }]]), last: { sequence: 12n, cursor: 'c12' } };
  await assert.rejects(runTransaction(client, 's', 'erc20', prepareTransaction(tables, bad)!, 11n, collections), /numeric/);
  assert.equal((await readCursor(client, 's', 'erc20'))!.sequence, 11n, 'the cursor did not move');
  assert.equal((await client.query('SELECT count(*)::int AS n FROM s.erc20_balances')).rows[0].n, 1);
  // The connection is usable after the failure.
  assert.equal((await client.query('SELECT 1 AS one')).rows[0].one, 1);
});
