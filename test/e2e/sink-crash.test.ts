/**
 * Exactly once in the destination (issue 32 point 3, 6): `chain-node sink postgres` following the devnet's erc20
 * balances is killed with SIGKILL at random moments, and the node once meanwhile, many times in one run. After
 * every kill the tables equal the node's state at the cursor PostgreSQL holds — a reference fold of the node's own
 * change log through that sequence — and audit triggers installed in PostgreSQL prove no change was applied twice:
 * the stored cursor only ever moves forward, and no row is rewritten by a change at or below the one that last
 * wrote it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, waitUntil, type NodeProcess } from '../support/node-process.js';
import { freePort } from '../support/ports.js';
import { startPostgres } from '../support/postgres.js';
import { startSinkProcess } from '../support/sink-process.js';
import { assertTableEquals, changesThrough, FAST, foldErc20, headSequence, metric, metricsText, readAtCursor, storedCursor, startNodeOn, waitFor } from './sink-support.js';

const TRIALS = 12;
/** The trial in which the node is killed (and restarted) while the sink follows it. */
const NODE_KILL_TRIAL = 4;
const NODE_TOML = ['[[processors]]', 'id = "erc20"', 'kind = "erc20"', 'tokens = "*"', ''].join('\n');
const SETS = [...FAST, 'devnet.accounts=64', 'devnet.transactions_per_block=24'];

const AUDIT = `
CREATE SCHEMA audit;
CREATE TABLE audit.violations (at timestamptz NOT NULL DEFAULT now(), what text NOT NULL);
CREATE TABLE audit.cursor_moves (old_sequence bigint NOT NULL, new_sequence bigint NOT NULL);
CREATE FUNCTION audit.row_rewritten() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.change_sequence <= OLD.change_sequence THEN
    INSERT INTO audit.violations (what) VALUES (format('row %s rewritten by change %s after change %s', NEW.key, NEW.change_sequence, OLD.change_sequence));
  END IF;
  RETURN NEW;
END $$;
CREATE FUNCTION audit.cursor_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit.cursor_moves VALUES (OLD.sequence, NEW.sequence);
  IF NEW.sequence <= OLD.sequence THEN
    INSERT INTO audit.violations (what) VALUES (format('cursor moved from %s to %s', OLD.sequence, NEW.sequence));
  END IF;
  RETURN NEW;
END $$;
-- In the sink's lock order (its transaction moves the cursor first, then writes the rows): installed while it runs,
-- the triggers wait for its transaction instead of deadlocking with it.
CREATE TRIGGER audit_cursor BEFORE UPDATE OF sequence ON chain_node.sink_cursors FOR EACH ROW EXECUTE FUNCTION audit.cursor_moved();
CREATE TRIGGER audit_rows BEFORE UPDATE OF change_sequence ON chain_node.erc20_balances FOR EACH ROW EXECUTE FUNCTION audit.row_rewritten();
`;

test('kill -9 of the sink at random points, and of the node meanwhile, leaves the tables equal to the node\'s state at the stored cursor; no change is applied twice', async (t) => {
  const pg = await startPostgres();
  t.after(() => pg.close());
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const startNode = (dir?: string) => startNodeOn(port, { toml: NODE_TOML, sets: SETS, ...(dir ? { dir } : {}) });
  let node: NodeProcess = await startNode();
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  await waitUntil(node, async () => (await headSequence(baseUrl, 'erc20')) >= 50n, 120_000);

  const sink = await startSinkProcess({ nodeUrl: baseUrl, postgresUrl: pg.url, toml: '[[processors]]\nid = "erc20"\n', sets: ['consumer.batch_changes=40'] });
  t.after(() => sink.stop('SIGKILL'));
  const bootstrapped = await (async () => {
    await waitFor('the first bootstrap', async () => { sink.assertRunning(); return (await storedCursor(pg, 'erc20')) !== null; });
    return (await storedCursor(pg, 'erc20'))!.sequence;
  })();
  await pg.query(AUDIT);

  let replays = 0;
  for (let trial = 1; trial <= TRIALS; trial += 1) {
    const before = (await storedCursor(pg, 'erc20'))!.sequence;
    if (trial === NODE_KILL_TRIAL) {
      await node.stop('SIGKILL');
      node = await startNode(node.dir);
      await waitFor('the sink to follow the restarted node', async () => (await storedCursor(pg, 'erc20'))!.sequence > before);
    }
    // A random moment of the sink's work: fetching, applying, committing or acknowledging.
    await new Promise((resolve) => setTimeout(resolve, 50 + Math.floor(Math.random() * 1200)));
    const text = await metricsText(sink.metricsUrl);
    replays += metric(text, 'chain_node_sink_changes_skipped_total', { processor: 'erc20' }) ?? 0;
    await sink.stop('SIGKILL');

    const { sequence, rows } = await readAtCursor(pg, 'erc20', 'erc20_balances');
    assertTableEquals(rows, foldErc20(await changesThrough(baseUrl, 'erc20', sequence)), `trial ${trial}: erc20_balances at sequence ${sequence}`);
    sink.restart();
    await waitFor(`trial ${trial}: the restarted sink to move past ${sequence}`, async () => { sink.assertRunning(); return (await storedCursor(pg, 'erc20'))!.sequence > sequence; });
  }
  await sink.stop('SIGKILL');
  const { sequence, rows } = await readAtCursor(pg, 'erc20', 'erc20_balances');
  assertTableEquals(rows, foldErc20(await changesThrough(baseUrl, 'erc20', sequence)), `after ${TRIALS} trials: erc20_balances at sequence ${sequence}`);
  assert.deepEqual(await pg.query('SELECT what FROM audit.violations'), [], 'no change applied twice');
  const moves = await pg.query<{ old_sequence: string; new_sequence: string }>('SELECT old_sequence::text, new_sequence::text FROM audit.cursor_moves');
  assert.ok(moves.length > TRIALS, `the cursor moved ${moves.length} times`);
  assert.ok(sequence > bootstrapped, 'the sink followed past its bootstrap');
  t.diagnostic(`${TRIALS} kills, cursor ${bootstrapped} → ${sequence}, ${moves.length} transactions, ${replays} redelivered changes skipped (seen before kills)`);
});
