/**
 * The fields of a rendered BlobsBlock that entity results carry as metadata — blockNumber, blockHash, timestamp,
 * finality — read straight from its bytes, without parsing the whole row (the entity API reads them for every row
 * of a page). render.ts writes `blockNumber`, `blockHash` and `timestamp` as top-level properties and `finality`
 * last (see with-finality.ts). JSON escapes every quote inside a string value, so a property boundary such as
 * `,"blockHash":"` can only be the real property: the first occurrence is it. Bytes of any other shape are parsed.
 */
import type { Hex } from '../sdk/chain.js';
import { FINALITIES, type Finality } from './types.js';

export interface BlockRowFields {
  readonly blockNumber: number;
  readonly blockHash: Hex;
  readonly timestamp: number;
  readonly finality: Finality;
}

const BLOCK_NUMBER = Buffer.from(',"blockNumber":', 'utf8');
const BLOCK_HASH = Buffer.from(',"blockHash":"', 'utf8');
const TIMESTAMP = Buffer.from(',"timestamp":', 'utf8');
const FINALITY_TAILS = FINALITIES.map((finality) => ({ finality, tail: Buffer.from(`,"finality":"${finality}"}`, 'utf8') }));
/** `0x` and 64 hex digits, then the closing quote. */
const HASH_CHARS = 66;
const QUOTE = 0x22;
const ZERO = 0x30;
const NINE = 0x39;

/** The non-negative integer written at `from` (digits up to a `,` or `}`), or null when there is none or it is unsafe. */
function integerAt(row: Buffer, from: number): number | null {
  let value = 0;
  let at = from;
  for (; at < row.length; at++) {
    const byte = row[at]!;
    if (byte < ZERO || byte > NINE) break;
    value = value * 10 + (byte - ZERO);
  }
  if (at === from || at - from > 15 || (row[at] !== 0x2c && row[at] !== 0x7d)) return null;
  if (at - from > 1 && row[from] === ZERO) return null;
  return value;
}

function fastFields(row: Buffer): BlockRowFields | null {
  const finality = FINALITY_TAILS.find(({ tail }) => row.length > tail.length && row.subarray(row.length - tail.length).equals(tail))?.finality;
  if (finality === undefined) return null;
  const numberAt = row.indexOf(BLOCK_NUMBER);
  const hashAt = row.indexOf(BLOCK_HASH);
  const timestampAt = row.indexOf(TIMESTAMP);
  if (numberAt < 0 || hashAt < 0 || timestampAt < 0) return null;
  const blockNumber = integerAt(row, numberAt + BLOCK_NUMBER.length);
  const timestamp = integerAt(row, timestampAt + TIMESTAMP.length);
  const hashStart = hashAt + BLOCK_HASH.length;
  if (blockNumber === null || timestamp === null || row[hashStart + HASH_CHARS] !== QUOTE) return null;
  const blockHash = row.toString('latin1', hashStart, hashStart + HASH_CHARS);
  if (!/^0x[0-9a-f]{64}$/.test(blockHash)) return null;
  return { blockNumber, blockHash: blockHash as Hex, timestamp, finality };
}

function parsedFields(row: Buffer): BlockRowFields {
  const { blockNumber, blockHash, timestamp, finality } = JSON.parse(row.toString('utf8')) as BlockRowFields;
  return { blockNumber, blockHash, timestamp, finality };
}

/** blockNumber, blockHash, timestamp and finality of a stored BlobsBlock row. */
export function blockRowFields(row: Buffer): BlockRowFields {
  return fastFields(row) ?? parsedFields(row);
}
