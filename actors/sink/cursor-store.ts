/**
 * The sink's own table `<schema>.sink_cursors`: per processor, the last change its tables hold (sequence and
 * cursor), written in the same transaction as the rows (exactly once in the destination, issue 32 point 3), with the
 * instance and kind it follows, its consumer, and per collection the table and the boundary of the snapshot it was
 * bootstrapped from. A session-level advisory lock per (schema, processor) keeps a second sink off the same tables.
 */
import type pg from 'pg';
import { qualified, quoteIdent } from './tables.js';

export const CURSOR_TABLE = 'sink_cursors';

export interface CollectionState {
  readonly table: string;
  /** The snapshot's boundary sequence (decimal): the table's rows hold every change up to it. */
  readonly boundary: string;
  /**
   * The highest block whose rows the table holds finalized (null: none yet): every row at or below it is final, so
   * a `finalized` change updates only the rows above it. Moved in the transaction of each batch.
   */
  readonly finalizedBlock?: number | null;
}

export interface CursorRow {
  readonly processor: string;
  readonly instance: string;
  readonly kind: string;
  readonly consumer: string;
  readonly sequence: bigint;
  readonly cursor: string;
  readonly collections: Readonly<Record<string, CollectionState>>;
  readonly bootstraps: number;
}

export async function ensureCursorTable(client: pg.Client, schema: string): Promise<void> {
  await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
  await client.query(`CREATE TABLE IF NOT EXISTS ${qualified(schema, CURSOR_TABLE)} (
  processor text PRIMARY KEY,
  instance text NOT NULL,
  kind text NOT NULL,
  consumer text NOT NULL,
  sequence bigint NOT NULL,
  cursor text NOT NULL,
  collections jsonb NOT NULL,
  bootstraps integer NOT NULL,
  bootstrapped_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
)`);
}

export async function readCursor(client: pg.Client, schema: string, processor: string): Promise<CursorRow | null> {
  const result = await client.query<{ processor: string; instance: string; kind: string; consumer: string; sequence: string; cursor: string; collections: Record<string, CollectionState>; bootstraps: number }>(
    `SELECT processor, instance, kind, consumer, sequence, cursor, collections, bootstraps FROM ${qualified(schema, CURSOR_TABLE)} WHERE processor = $1`, [processor]);
  const row = result.rows[0];
  return row ? { ...row, sequence: BigInt(row.sequence) } : null;
}

/** Inserts or replaces the processor's row (inside a bootstrap's transaction). */
export async function writeCursor(client: pg.Client, schema: string, row: CursorRow): Promise<void> {
  await client.query(`INSERT INTO ${qualified(schema, CURSOR_TABLE)} (processor, instance, kind, consumer, sequence, cursor, collections, bootstraps, bootstrapped_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now(), now())
ON CONFLICT (processor) DO UPDATE SET instance = EXCLUDED.instance, kind = EXCLUDED.kind, consumer = EXCLUDED.consumer, sequence = EXCLUDED.sequence,
  cursor = EXCLUDED.cursor, collections = EXCLUDED.collections, bootstraps = EXCLUDED.bootstraps, bootstrapped_at = now(), updated_at = now()`,
  [row.processor, row.instance, row.kind, row.consumer, row.sequence.toString(), row.cursor, JSON.stringify(row.collections), row.bootstraps]);
}

const LOCK_SPACE = 'chain-node-sink';

/** Takes the session's advisory lock on (schema, processor); false when another session holds it. */
export async function tryLockProcessor(client: pg.Client, schema: string, processor: string): Promise<boolean> {
  const result = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtext($1), hashtext($2)) AS locked', [LOCK_SPACE, `${schema}.${processor}`]);
  return result.rows[0]?.locked === true;
}

/** The process id of the session holding the lock on (schema, processor), if any (for the error message). */
export async function lockHolder(client: pg.Client, schema: string, processor: string): Promise<{ pid: number; applicationName: string; clientAddress: string | null } | null> {
  const result = await client.query<{ pid: number; application_name: string; client_addr: string | null }>(
    `SELECT l.pid, a.application_name, a.client_addr::text AS client_addr FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND l.granted AND l.classid::int = hashtext($1) AND l.objid::int = hashtext($2) AND l.objsubid = 2 LIMIT 1`,
    [LOCK_SPACE, `${schema}.${processor}`]);
  const row = result.rows[0];
  return row ? { pid: row.pid, applicationName: row.application_name, clientAddress: row.client_addr } : null;
}
