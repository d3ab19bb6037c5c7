/**
 * A mapping declared in sink.toml (`[[processors.mapping]]`), for a kind the sink has no built-in mapping for — a
 * user's kind (`kind = "custom"`): per collection, the change kind whose data is the row (`put`: an apply, or an
 * undo restoring it) and the one that removes it (`delete`), where the row JSON holds its block and finality, and
 * typed columns over fields of the row. Field paths are dotted names (`lastChange.blockNumber`); every name and
 * type is checked when the config is read, so nothing here reaches SQL unchecked.
 */
import type { ChangeEnvelope } from '../../../api/client/index.js';
import { UnknownChangeError, type CollectionMapping, type KindMapping, type RowWrite } from './mapping.js';

/** One `[[processors.mapping]]` entry (config.ts checks each value). */
export interface DeclaredCollection {
  readonly collection: string;
  readonly put: string;
  readonly delete?: string | undefined;
  readonly block_number?: string | undefined;
  readonly block_hash?: string | undefined;
  readonly finality?: string | undefined;
  readonly columns: ReadonlyArray<{ readonly name: string; readonly type: string; readonly field: string }>;
  readonly indexes: readonly string[];
}

/** The column types a declared column may take. */
export const DECLARED_TYPES = ['text', 'numeric', 'numeric(78,0)', 'bigint', 'integer', 'boolean', 'double precision'] as const;
/** A dotted path of JSON field names. */
export const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

function read(data: Record<string, unknown>, path: string): unknown {
  let value: unknown = data;
  for (const name of path.split('.')) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[name] : undefined;
  return value;
}

/** `data #>> '{a,b}'` cast to `type` (immutable: usable in a STORED generated column). */
function expression(path: string, type: string): string {
  const text = `(data #>> '{${path.split('.').join(',')}}')`;
  return type === 'text' ? text : `${text}::${type}`;
}

export function declaredMapping(kind: string, changeSchema: string, entries: readonly DeclaredCollection[]): KindMapping {
  const collections: CollectionMapping[] = entries.map((entry) => ({
    collection: entry.collection,
    columns: entry.columns.map((c) => ({ name: c.name, type: c.type, expression: expression(c.field, c.type) })),
    indexes: entry.indexes.map((column) => ({ suffix: column, on: column })),
    dataFinality: entry.finality !== undefined,
  }));
  const byKind = new Map<string, { entry: DeclaredCollection; remove: boolean }>();
  for (const entry of entries) {
    byKind.set(entry.put, { entry, remove: false });
    if (entry.delete !== undefined) byKind.set(entry.delete, { entry, remove: true });
  }
  return {
    kind,
    changeSchema,
    collections,
    writes(change: ChangeEnvelope): RowWrite[] {
      const found = byKind.get(change.kind);
      if (!found || change.key === null) throw new UnknownChangeError(change, `declared (processors.mapping of kind '${kind}')`);
      const { entry, remove } = found;
      if (remove) return [{ collection: entry.collection, key: change.key, data: null, blockNumber: null, blockHash: null, finality: null }];
      if (change.data === null || typeof change.data !== 'object' || Array.isArray(change.data)) {
        throw new UnknownChangeError(change, `declared (processors.mapping of kind '${kind}': its data is not a JSON object)`);
      }
      const data = change.data as Record<string, unknown>;
      const number = entry.block_number === undefined ? null : read(data, entry.block_number);
      const hash = entry.block_hash === undefined ? null : read(data, entry.block_hash);
      const finality = entry.finality === undefined ? change.finality : read(data, entry.finality) ?? change.finality;
      return [{
        collection: entry.collection, key: change.key, data,
        blockNumber: typeof number === 'number' ? number : null,
        blockHash: typeof hash === 'string' ? hash : null,
        finality: typeof finality === 'string' ? finality : null,
      }];
    },
  };
}
