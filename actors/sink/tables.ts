/**
 * The sink's tables in PostgreSQL (issue 32 point 1): one per processor collection — the entity key as primary key,
 * the node's JSON as `jsonb`, block number and hash, finality, the change sequence that wrote the row, and the
 * kind's typed columns (STORED generated columns over `data`) — with an index on the block (a `finalized` change
 * updates the range of blocks above the table's last finalized one) and the kind's own indexes; finality is left out
 * of every index so its UPDATE can be heap-only. A bootstrap fills fresh tables
 * (`<table>__n`) and swaps them in with `swapStatements`, in the transaction that records the cursor.
 */
import type { CollectionMapping } from './mappings/index.js';

/**
 * Room left in each page so a `finalized` change's UPDATE (finality and the data's finality field; no indexed value
 * changes) can stay on the page as a heap-only tuple, without new index entries.
 */
const FILLFACTOR = 85;

export const COMMON_COLUMNS = ['key', 'data', 'block_number', 'block_hash', 'finality', 'change_sequence'] as const;
/** The suffix of a table being filled by a bootstrap, before the swap. */
export const NEXT_SUFFIX = '__n';
/** Longest table name: room for `__n` and the longest index suffix within PostgreSQL's 63 characters. */
export const MAX_TABLE_NAME = 47;

export interface SinkTable {
  readonly collection: string;
  readonly mapping: CollectionMapping;
  readonly schema: string;
  /** The table's name (unqualified). */
  readonly name: string;
}

export function quoteIdent(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}

export function qualified(schema: string, name: string): string {
  return `${quoteIdent(schema)}.${quoteIdent(name)}`;
}

/** The default table prefix of a processor: its id in lower case, other characters as `_`, then `_`. */
export function defaultTablePrefix(processorId: string): string {
  const base = processorId.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  return `${/^[a-z_]/.test(base) ? base : `p_${base}`}_`;
}

/** Index suffixes every table has, then the kind's. */
function indexesOf(mapping: CollectionMapping): Array<{ suffix: string; on: string; where?: string }> {
  return [
    { suffix: 'block', on: 'block_number' },
    ...mapping.indexes,
  ];
}

/** CREATE TABLE of `name` (a final or a `__n` table) for `mapping`, without its keys and indexes (indexStatements). */
export function createTableStatement(schema: string, name: string, mapping: CollectionMapping): string {
  const typed = mapping.columns.map((c) => `,\n  ${quoteIdent(c.name)} ${c.type} GENERATED ALWAYS AS (${c.expression}) STORED`).join('');
  return `CREATE TABLE ${qualified(schema, name)} (
  key text NOT NULL,
  data jsonb NOT NULL,
  block_number bigint,
  block_hash text,
  finality text,
  change_sequence bigint NOT NULL${typed}
) WITH (fillfactor = ${FILLFACTOR})`;
}

/**
 * The primary key (`<name>_pkey`) and secondary indexes of table `name`: a bootstrap builds them after its COPY
 * (one sort each, faster than maintaining them row by row).
 */
export function indexStatements(schema: string, name: string, mapping: CollectionMapping): string[] {
  return [
    `ALTER TABLE ${qualified(schema, name)} ADD CONSTRAINT ${quoteIdent(`${name}_pkey`)} PRIMARY KEY (key)`,
    ...indexesOf(mapping).map((index) => `CREATE INDEX ${quoteIdent(`${name}_${index.suffix}`)} ON ${qualified(schema, name)} (${index.on})${index.where ? ` WHERE ${index.where}` : ''}`),
  ];
}

/** Replaces table `name` (when it exists) by the filled `name__n`, renaming its constraint and indexes. */
export function swapStatements(schema: string, name: string, mapping: CollectionMapping): string[] {
  const next = `${name}${NEXT_SUFFIX}`;
  return [
    `DROP TABLE IF EXISTS ${qualified(schema, name)}`,
    `ALTER TABLE ${qualified(schema, next)} RENAME TO ${quoteIdent(name)}`,
    `ALTER TABLE ${qualified(schema, name)} RENAME CONSTRAINT ${quoteIdent(`${next}_pkey`)} TO ${quoteIdent(`${name}_pkey`)}`,
    ...indexesOf(mapping).map((index) => `ALTER INDEX ${qualified(schema, `${next}_${index.suffix}`)} RENAME TO ${quoteIdent(`${name}_${index.suffix}`)}`),
  ];
}

/** Every column the table of `mapping` must have. */
export function expectedColumns(mapping: CollectionMapping): string[] {
  return [...COMMON_COLUMNS, ...mapping.columns.map((c) => c.name)];
}
