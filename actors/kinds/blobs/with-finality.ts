/**
 * A finality update of a stored BlobsBlock without re-running the transform. `finality` is the last property of a
 * rendered block, so the update replaces the tail `,"finality":"<old>"}`. JSON escapes every quote inside a string
 * value, so that tail can only be the real property. Bytes with any other tail are parsed and re-serialized, which
 * keeps their property order.
 */
import { FINALITIES, type Finality } from './types.js';

const TAILS: ReadonlyMap<Finality, Buffer> = new Map(FINALITIES.map((finality) => [finality, Buffer.from(`,"finality":"${finality}"}`, 'utf8')]));

function tailOf(finality: Finality): Buffer {
  return TAILS.get(finality)!;
}

function endsWith(bytes: Buffer, tail: Buffer): boolean {
  return bytes.length > tail.length && bytes.subarray(bytes.length - tail.length).equals(tail);
}

function reserialize(renderedBlockJson: Buffer, finality: Finality): Buffer {
  const parsed: unknown = JSON.parse(renderedBlockJson.toString('utf8'));
  const isBlock = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && 'finality' in parsed;
  if (!isBlock) throw new TypeError('withFinality expects a rendered BlobsBlock (a JSON object with a finality property)');
  return Buffer.from(JSON.stringify({ ...parsed, finality }), 'utf8');
}

/** A new buffer: the rendered block with `finality` replaced. */
export function withFinality(renderedBlockJson: Buffer, finality: Finality): Buffer {
  for (const current of FINALITIES) {
    const tail = tailOf(current);
    if (endsWith(renderedBlockJson, tail)) {
      return Buffer.concat([renderedBlockJson.subarray(0, renderedBlockJson.length - tail.length), tailOf(finality)]);
    }
  }
  return reserialize(renderedBlockJson, finality);
}
