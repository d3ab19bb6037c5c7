/**
 * The chain's domain types, declared once, in the lowest folder that needs them (store/ records them; net/, actors/
 * and api/ import them from here or through net/eth/hex.ts): hex strings, hashes, a block named by number and hash, and
 * the finality of a block or of a processor's output.
 */

/** Lower-case, `0x`-prefixed hex. */
export type Hex = `0x${string}`;

/** A 32-byte Keccak-256 (or SHA-256) digest as lower-case hex. */
export type Hash = `0x${string}`;

/** A block by number and hash (reth's BlockNumHash). */
export interface BlockRef {
  readonly number: number;
  readonly hash: Hash;
}

/** How settled a covered block is (spec §3.2): seen at the head, included in the canonical chain, or finalized. */
export const FINALITIES = ['preview', 'included', 'finalized'] as const;
export type Finality = (typeof FINALITIES)[number];
