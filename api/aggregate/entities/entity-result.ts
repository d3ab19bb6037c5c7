/**
 * One generic entity result (spec §2.7) as JSON bytes, assembled around the row's stored bytes (the
 * decoded data is never parsed and re-encoded): key (URL-safe hex), collection, schema label, block,
 * timestamp and finality metadata, then `data`.
 */
import type { CollectionDescription, CollectionRow } from '../../../store/collection.js';

/** Everything of a result before its data: `{"key":…,"finality":…,"data":` (the row's bytes and `}` follow). */
export function entityResultHead(collection: CollectionDescription, row: CollectionRow): string {
  const { meta } = row;
  const block = meta.blockNumber === null ? 'null' : `{"number":${meta.blockNumber},"hash":${JSON.stringify(meta.blockHash)}}`;
  return `{"key":"${row.key.toString('hex')}","collection":${JSON.stringify(collection.name)},"schema":${JSON.stringify(collection.schema)},`
    + `"block":${block},"timestamp":${JSON.stringify(meta.timestamp)},"finality":${JSON.stringify(meta.finality)},"data":`;
}

/** What follows a result's data. */
export const ENTITY_RESULT_CLOSE = Buffer.from('}');

export function entityResultBytes(collection: CollectionDescription, row: CollectionRow): Buffer {
  return Buffer.concat([Buffer.from(entityResultHead(collection, row), 'utf8'), row.value, ENTITY_RESULT_CLOSE]);
}

/** An entity key in a path: URL-safe hex (even length, no prefix); anything else is refused. */
export const ENTITY_KEY = /^(?:[0-9a-f]{2}){1,128}$/;
