/**
 * The ends of the recorded chain and the journal, read one way everywhere: the canonical head (the highest block the
 * chain lane made canonical), the canonical base (the lowest: where the recorded chain begins) and the journal head
 * (the last move's sequence), and the journal's newest finalized block. Hashes come back as hex (BlockRef);
 * `canonicalHeadNumber` skips the hash.
 */
import type { BlockRef, Hash } from './chain-types.js';
import type { Store } from './store.js';
import { decodeU64KeyAsNumber } from './keys.js';
import { decodeJournalMove } from './journal.js';

/** The highest canonical block, or null before the chain lane applied any. */
export function canonicalHead(store: Pick<Store, 'chain'>): BlockRef | null {
  return canonicalEnd(store, true);
}

/** The lowest canonical block (nothing below it is recorded live), or null before the first. */
export function canonicalBase(store: Pick<Store, 'chain'>): BlockRef | null {
  return canonicalEnd(store, false);
}

export function canonicalHeadNumber(store: Pick<Store, 'chain'>): number | null {
  for (const key of store.chain.canonical.getKeys({ reverse: true, limit: 1 })) return decodeU64KeyAsNumber(key as Buffer);
  return null;
}

/** The sequence of the journal's last move; 0 while it is empty. */
export function journalHead(store: Pick<Store, 'chain'>): number {
  for (const key of store.chain.journal.getKeys({ reverse: true, limit: 1 })) return decodeU64KeyAsNumber(key as Buffer);
  return 0;
}

/** The block of the journal's newest `finalize` move, or null when nothing was ever finalized. */
export function journalFinalized(store: Pick<Store, 'chain'>): BlockRef | null {
  for (const { value } of store.chain.journal.getRange({ reverse: true })) {
    const move = decodeJournalMove(value);
    if (move.op === 'finalize') return { number: move.number, hash: `0x${Buffer.from(move.hash).toString('hex')}` as Hash };
  }
  return null;
}

function canonicalEnd(store: Pick<Store, 'chain'>, reverse: boolean): BlockRef | null {
  const entry = canonicalEndBytes(store, reverse);
  return entry === null ? null : { number: entry.number, hash: `0x${entry.hash.toString('hex')}` as Hash };
}

/** An end of the canonical chain with its hash as stored bytes (readers that hand bytes on: the JSON-RPC reader). */
export function canonicalEndBytes(store: Pick<Store, 'chain'>, reverse: boolean): { number: number; hash: Buffer } | null {
  for (const { key, value } of store.chain.canonical.getRange({ reverse, limit: 1 })) return { number: decodeU64KeyAsNumber(key), hash: value };
  return null;
}
