/**
 * The bloom check before receipts: which blocks' receipts a log-driven consumer can need, from the verified header's
 * `logsBloom` alone. An interest is a set of contract addresses and a set of topics (either may be empty: any); a
 * block matches when its bloom may contain one of the addresses (or there are none) and one of the topics (or there
 * are none). A bloom never has false negatives, so a non-matching block certainly has no log the interest wants; a
 * positive may be false, and then all of the block's receipts are downloaded anyway (they are verified as a whole
 * against the receipts root, never piecemeal).
 */
import { bloomMayContain } from '../eth/bloom.js';
import type { BlockHeader } from '../eth/header.js';
import type { Hex } from '../eth/hex.js';

export interface LogInterest {
  /** Contract addresses (0x-hex, 20 bytes); empty: any address. */
  readonly addresses: readonly Hex[];
  /** Topics at any position (0x-hex, 32 bytes); empty: any topic. */
  readonly topics: readonly Hex[];
}

/** Whether the block whose header this is may hold a log `interest` wants (false: certainly not). */
export function bloomMatches(header: Pick<BlockHeader, 'logsBloom'>, interest: LogInterest): boolean {
  const anyOf = (values: readonly Hex[]) => values.length === 0 || values.some((value) => bloomMayContain(header.logsBloom, value));
  return anyOf(interest.addresses) && anyOf(interest.topics);
}

/** The receipts rule for an acquisition: every block (null interest), or only bloom-positive ones. */
export function receiptsWanted(interest: LogInterest | null): (header: BlockHeader) => boolean {
  return interest === null ? () => true : (header) => bloomMatches(header, interest);
}
