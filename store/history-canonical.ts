/**
 * `history.canonical`: the hashes of finalized blocks below the chain lane's recorded chain (`chain.canonical`) that
 * the history lane proved canonical. Most entries' hash is the parent hash their upper neighbour names, down from
 * the lowest block of `chain.canonical`: that run [floor, lowest canonical − 1] grows downwards only (walking
 * headers, or committing a verified chunk linked to the floor). A source that proves canonicality itself (Era1 files
 * whose accumulator roots are mainnet's, actors/history/era-source.ts) adds runs of its own lower down; a walk
 * starts from the lowest entry above its target, whichever run it belongs to. Entries are never rewritten:
 * finalized blocks do not reorganise. Written by the history lane only; read by the history lane and the JSON-RPC
 * lane (which serves these blocks once their material is recorded).
 *
 * Value layout (64 bytes): block hash (32) ‖ parent hash (32).
 */
import type { Hash } from './chain-types.js';
import type { Store } from './store.js';
import { decodeU64KeyAsNumber, u64Key } from './keys.js';


const toHex = (bytes: Uint8Array): Hash => `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`;
const fromHex = (hex: string): Buffer => Buffer.from(hex.slice(2), 'hex');

export interface HistoryLink {
  readonly number: number;
  readonly hash: Hash;
  readonly parentHash: Hash;
}

function decode(number: number, value: Uint8Array): HistoryLink {
  return { number, hash: toHex(value.subarray(0, 32)), parentHash: toHex(value.subarray(32, 64)) };
}

/** The proven-canonical block at `number` below the recorded chain, or undefined. */
export function readHistoryLink(store: Store, number: number): HistoryLink | undefined {
  const value = store.historyCanonical()?.getBinary(u64Key(number));
  return value ? decode(number, value) : undefined;
}

/** The lowest proven block (the run's floor), or undefined when nothing was proven yet. */
export function historyFloor(store: Store): HistoryLink | undefined {
  const table = store.historyCanonical();
  if (!table) return undefined;
  for (const { key, value } of table.getRange({ limit: 1 })) return decode(decodeU64KeyAsNumber(key), value);
  return undefined;
}

/** The lowest proven block above `number` (where a walk down to `number` starts), or undefined. */
export function lowestLinkAbove(store: Store, number: number): HistoryLink | undefined {
  const table = store.historyCanonical();
  if (!table) return undefined;
  for (const { key, value } of table.getRange({ start: u64Key(number + 1), limit: 1 })) return decode(decodeU64KeyAsNumber(key), value);
  return undefined;
}

/** Writes proven links; call inside a write transaction (the table is created on first use). */
export function putHistoryLinks(store: Store, links: readonly HistoryLink[]): void {
  const table = store.historyCanonical()!;
  for (const link of links) {
    const value = Buffer.allocUnsafe(64);
    value.set(fromHex(link.hash), 0);
    value.set(fromHex(link.parentHash), 32);
    table.put(u64Key(link.number), value);
  }
}
