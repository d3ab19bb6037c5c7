/**
 * Runs a PagePlan in one PostgreSQL transaction that also moves the processor's cursor (issue 32 point 3). The
 * cursor moves first — guarded on the sequence it moves from, so a second writer or a replay can never move it
 * twice — then per table one UPDATE for finality, one DELETE of keys and one multi-row upsert, then COMMIT. Nothing
 * is acknowledged to the node before COMMIT returns (the caller acknowledges).
 *
 * The statements are built ahead (`prepareTransaction`, while the previous transaction runs, their values inlined as
 * dollar-quoted literals) and sent with BEGIN, the guard and COMMIT as one query: one round trip, so PostgreSQL runs
 * them back to back and never waits on the sink's event loop (busy building the next transaction) between them.
 */
import type pg from 'pg';
import { CURSOR_TABLE, type CollectionState } from './cursor-store.js';
import type { PagePlan, TableOps } from './page-plan.js';
import { qualified, type SinkTable } from './tables.js';

export class CursorMovedError extends Error {
  constructor(processor: string, expected: bigint) {
    super(`the cursor of processor '${processor}' is no longer at sequence ${expected}: another writer moved it (is a second sink running on these tables?)`);
    this.name = 'CursorMovedError';
  }
}

/** One plan's statements, as one text with their values inlined as literals (built ahead), and the cursor they move to. */
export interface PreparedTransaction {
  readonly text: string;
  readonly to: { readonly sequence: bigint; readonly cursor: string };
}

/**
 * `text` as a dollar-quoted literal: nothing inside is escaped (a 4 MB batch is copied once, never scanned character
 * by character), under any `standard_conforming_strings`; the tag is one the text does not hold.
 */
export function literal(text: string): string {
  for (let n = 0; ; n += 1) {
    const tag = `$j${n === 0 ? '' : n.toString(36)}$`;
    if (!text.includes(tag)) return `${tag}${text}${tag}`;
  }
}

/** Rows of blocks in (from, through] become finalized: a range of the block index, never the rows final already. */
function finalizeRows(table: SinkTable, from: number, through: number): string {
  const data = table.mapping.dataFinality ? `, data = jsonb_set(data, '{finality}', '"finalized"')` : '';
  return `UPDATE ${qualified(table.schema, table.name)} SET finality = 'finalized'${data} WHERE block_number > ${from} AND block_number <= ${through} AND finality IS DISTINCT FROM 'finalized'`;
}

function deleteRows(table: SinkTable, keys: Set<string>): string {
  return `DELETE FROM ${qualified(table.schema, table.name)} WHERE key IN (SELECT jsonb_array_elements_text(${literal(JSON.stringify([...keys]))}::jsonb))`;
}

/** One multi-row upsert: the rows as one JSON array, expanded by jsonb_to_recordset (parsed once by PostgreSQL). */
function upsertRows(table: SinkTable, ops: TableOps): string {
  const rows: string[] = [];
  for (const row of ops.upserts.values()) {
    rows.push(`{"k":${JSON.stringify(row.key)},"d":${JSON.stringify(row.data)},"n":${row.blockNumber ?? 'null'},"h":${row.blockHash === null ? 'null' : JSON.stringify(row.blockHash)},"f":${row.finality === null ? 'null' : JSON.stringify(row.finality)},"s":${row.sequence}}`);
  }
  return `INSERT INTO ${qualified(table.schema, table.name)} (key, data, block_number, block_hash, finality, change_sequence)
SELECT k, d, n, h, f, s FROM jsonb_to_recordset(${literal(`[${rows.join(',')}]`)}::jsonb) AS r(k text, d jsonb, n bigint, h text, f text, s bigint)
ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data, block_number = EXCLUDED.block_number, block_hash = EXCLUDED.block_hash,
  finality = EXCLUDED.finality, change_sequence = EXCLUDED.change_sequence`;
}

/** The statements of `plan` for `tables`; null when every change of the plan was a replay. */
export function prepareTransaction(tables: ReadonlyMap<string, SinkTable>, plan: PagePlan): PreparedTransaction | null {
  if (plan.last === null) return null;
  const statements: string[] = [];
  for (const [collection, ops] of plan.tables) {
    const table = tables.get(collection);
    if (!table) throw new Error(`no table for collection '${collection}'`);
    if (ops.finalizedThrough !== null) statements.push(finalizeRows(table, ops.finalizedFrom, ops.finalizedThrough));
    if (ops.deletes.size > 0) statements.push(deleteRows(table, ops.deletes));
    if (ops.upserts.size > 0) statements.push(upsertRows(table, ops));
  }
  return { text: [...statements, 'COMMIT'].join(';\n'), to: plan.last };
}

/** The SQLSTATE the guard raises when the stored cursor is not where the transaction moves it from. */
export const CURSOR_MOVED_SQLSTATE = 'CN001';

/**
 * The guarded cursor move as one statement (a DO block): moves the processor's cursor from `from` to `to` with the
 * collections' state, and raises CURSOR_MOVED_SQLSTATE when it was not at `from` (another writer), which ends the
 * query and leaves the transaction to roll back.
 */
export function cursorGuard(schema: string, processor: string, from: bigint, to: { readonly sequence: bigint; readonly cursor: string }, collections: Readonly<Record<string, CollectionState>>): string {
  const body = `BEGIN
  UPDATE ${qualified(schema, CURSOR_TABLE)} SET sequence = ${to.sequence}, cursor = ${literal(to.cursor)}, collections = ${literal(JSON.stringify(collections))}::jsonb, updated_at = now()
    WHERE processor = ${literal(processor)} AND sequence = ${from};
  IF NOT FOUND THEN RAISE EXCEPTION 'the stored cursor is not at sequence ${from}' USING ERRCODE = '${CURSOR_MOVED_SQLSTATE}'; END IF;
END`;
  return `DO ${literal(body)}`;
}

/**
 * Runs `prepared` (whose changes follow sequence `from`) in one transaction that moves the cursor and stores the
 * collections' state: BEGIN, the guarded cursor move, the statements and COMMIT in one round trip (a statement that
 * fails ends it: PostgreSQL skips the rest, COMMIT included). Throws CursorMovedError (rolled back) when the stored
 * cursor was not at `from`, or the error of the statement that failed (rolled back).
 */
export async function runTransaction(client: pg.Client, schema: string, processor: string, prepared: PreparedTransaction, from: bigint, collections: Readonly<Record<string, CollectionState>>): Promise<void> {
  try {
    await client.query(`BEGIN;\n${cursorGuard(schema, processor, from, prepared.to, collections)};\n${prepared.text}`);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    if ((error as { code?: unknown }).code === CURSOR_MOVED_SQLSTATE) throw new CursorMovedError(processor, from);
    throw error;
  }
}
