/**
 * Runs a PagePlan in one PostgreSQL transaction that also moves the processor's cursor (issue 32 point 3): per table
 * one UPDATE for finality, one DELETE of keys and one multi-row upsert (`unnest` of arrays), then the cursor —
 * guarded on the sequence it moves from, so a second writer or a replay can never move it twice. Nothing is
 * acknowledged to the node before COMMIT returns (the caller acknowledges).
 */
import type pg from 'pg';
import { advanceCursor } from './cursor-store.js';
import type { PagePlan, TableOps } from './page-plan.js';
import { qualified, type SinkTable } from './tables.js';

export class CursorMovedError extends Error {
  constructor(processor: string, expected: bigint) {
    super(`the cursor of processor '${processor}' is no longer at sequence ${expected}: another writer moved it (is a second sink running on these tables?)`);
    this.name = 'CursorMovedError';
  }
}

async function finalizeRows(client: pg.Client, table: SinkTable, through: number): Promise<void> {
  const data = table.mapping.dataFinality ? `, data = jsonb_set(data, '{finality}', '"finalized"')` : '';
  await client.query(`UPDATE ${qualified(table.schema, table.name)} SET finality = 'finalized'${data} WHERE finality <> 'finalized' AND block_number <= $1`, [through]);
}

async function deleteRows(client: pg.Client, table: SinkTable, keys: Set<string>): Promise<void> {
  await client.query(`DELETE FROM ${qualified(table.schema, table.name)} WHERE key = ANY($1::text[])`, [[...keys]]);
}

async function upsertRows(client: pg.Client, table: SinkTable, ops: TableOps): Promise<void> {
  const keys: string[] = [];
  const data: string[] = [];
  const numbers: Array<number | null> = [];
  const hashes: Array<string | null> = [];
  const finalities: Array<string | null> = [];
  const sequences: string[] = [];
  for (const row of ops.upserts.values()) {
    keys.push(row.key);
    data.push(JSON.stringify(row.data));
    numbers.push(row.blockNumber);
    hashes.push(row.blockHash);
    finalities.push(row.finality);
    sequences.push(row.sequence);
  }
  await client.query(`INSERT INTO ${qualified(table.schema, table.name)} (key, data, block_number, block_hash, finality, change_sequence)
SELECT * FROM unnest($1::text[], $2::jsonb[], $3::bigint[], $4::text[], $5::text[], $6::bigint[])
ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data, block_number = EXCLUDED.block_number, block_hash = EXCLUDED.block_hash,
  finality = EXCLUDED.finality, change_sequence = EXCLUDED.change_sequence`, [keys, data, numbers, hashes, finalities, sequences]);
}

/**
 * Applies `plan` (whose changes follow sequence `from`) to `tables` and moves the cursor, in one transaction.
 * Throws CursorMovedError (rolled back) when the stored cursor was not at `from`.
 */
export async function applyPlan(client: pg.Client, schema: string, processor: string, tables: ReadonlyMap<string, SinkTable>, plan: PagePlan, from: bigint): Promise<void> {
  if (plan.last === null) return;
  await client.query('BEGIN');
  try {
    for (const [collection, ops] of plan.tables) {
      const table = tables.get(collection);
      if (!table) throw new Error(`no table for collection '${collection}'`);
      if (ops.finalizedThrough !== null) await finalizeRows(client, table, ops.finalizedThrough);
      if (ops.deletes.size > 0) await deleteRows(client, table, ops.deletes);
      if (ops.upserts.size > 0) await upsertRows(client, table, ops);
    }
    if (!(await advanceCursor(client, schema, processor, from, plan.last.sequence, plan.last.cursor))) throw new CursorMovedError(processor, from);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
