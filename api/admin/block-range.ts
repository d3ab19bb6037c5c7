/**
 * The block range of an admin request body, checked one way for every route that takes one (materialization jobs,
 * backfill subscriptions, artifact replay and pins): two block numbers, `fromBlock <= toBlock`.
 */
import { z } from 'zod';

/** A block number in a JSON body. */
export const blockNumber = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** `fields` plus `fromBlock` and `toBlock`, strict, refused unless `fromBlock <= toBlock`. */
export function withBlockRange<T extends z.ZodRawShape>(fields: T) {
  return z.strictObject({ ...fields, fromBlock: blockNumber, toBlock: blockNumber })
    .refine((body) => ordered(body as BlockRange), { message: 'expected fromBlock <= toBlock', path: ['toBlock'] });
}

interface BlockRange {
  readonly fromBlock: number;
  readonly toBlock: number;
}

function ordered(range: BlockRange): boolean {
  return range.fromBlock <= range.toBlock;
}
