/**
 * One generic entity result (spec §2.7) as JSON bytes, assembled around the row's stored bytes (the
 * decoded data is never parsed and re-encoded): key (URL-safe hex), collection, schema label, block,
 * timestamp and finality metadata, then `data`.
 */
import type { CollectionDescription, CollectionRow } from '../../../actors/processor/kind.js';

export function entityResultBytes(collection: CollectionDescription, row: CollectionRow): Buffer {
  const { meta } = row;
  const block = meta.blockNumber === null ? null : { number: meta.blockNumber, hash: meta.blockHash };
  const head = JSON.stringify({
    key: row.key.toString('hex'), collection: collection.name, schema: collection.schema, block, timestamp: meta.timestamp, finality: meta.finality,
  });
  return Buffer.concat([Buffer.from(`${head.slice(0, -1)},"data":`, 'utf8'), row.value, CLOSE]);
}

const CLOSE = Buffer.from('}');

/** An entity key in a path: URL-safe hex (even length, no prefix); anything else is refused. */
export const ENTITY_KEY = /^(?:[0-9a-f]{2}){1,128}$/;
