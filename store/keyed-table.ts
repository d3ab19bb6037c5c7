/**
 * A keyed view: one owner's part of a shared LMDB table, every key stored behind the owner's prefix, read and written
 * through the subset of lmdb-js's `Database` interface the store's code uses (get, getBinary, getBinaryFast, put,
 * putSync, remove, getRange, getKeys, getKeysCount). Keys in and out are the owner's own, so code written against a
 * table of its own (a change log, a progress record, coverage) works on a view unchanged.
 *
 * Backfill-subscription streams live so (store/stream-tables.ts): their number is bounded by disk, not by LMDB's
 * named-table limit. Binary keys are prefixed `owner ‖ 0x00` (owner ids are ASCII, never NUL), string keys `owner/`;
 * each prefix's range ends before the next byte value, so one owner's walk never meets another's keys.
 */
import type { Database, RangeOptions } from 'lmdb';

type Key = Buffer | string;

export interface KeyedRange {
  readonly start: Key;
  readonly end: Key;
}

/** The key range of `owner` in a shared table with binary or string keys. */
export function ownerRange(owner: string, keys: 'binary' | 'string'): KeyedRange {
  if (keys === 'string') return { start: `${owner}/`, end: `${owner}0` };
  return { start: Buffer.concat([Buffer.from(owner, 'latin1'), Buffer.of(0)]), end: Buffer.concat([Buffer.from(owner, 'latin1'), Buffer.of(1)]) };
}

export class KeyedTable {
  private readonly prefix: Key;
  private readonly binary: boolean;

  constructor(readonly shared: Database<unknown, Key>, readonly owner: string, readonly range: KeyedRange) {
    this.prefix = range.start;
    this.binary = Buffer.isBuffer(range.start);
  }

  private outer(key: Key): Key {
    if (this.binary) return Buffer.concat([this.prefix as Buffer, key as Buffer]);
    return `${this.prefix as string}${key as string}`;
  }

  private inner(key: Key): Key {
    if (this.binary) return Buffer.from((key as Buffer).subarray((this.prefix as Buffer).length));
    return (key as string).slice((this.prefix as string).length);
  }

  get(key: Key): unknown {
    return this.shared.get(this.outer(key));
  }

  getBinary(key: Key): Buffer | undefined {
    return this.shared.getBinary(this.outer(key));
  }

  /** lmdb-js's shared read buffer: its `length`, not `byteLength`, is the value's size (STACK.md). */
  getBinaryFast(key: Key): Buffer | undefined {
    return this.shared.getBinaryFast(this.outer(key));
  }

  put(key: Key, value: unknown): Promise<boolean> {
    return this.shared.put(this.outer(key), value);
  }

  putSync(key: Key, value: unknown): void {
    this.shared.putSync(this.outer(key), value);
  }

  remove(key: Key): Promise<boolean> {
    return this.shared.remove(this.outer(key));
  }

  removeSync(key: Key): boolean {
    return this.shared.removeSync(this.outer(key));
  }

  /** The owner's entries, with the owner's keys; `start`/`end`/`reverse`/`limit` as lmdb-js takes them. */
  *getRange(options: RangeOptions = {}): Generator<{ key: Key; value: unknown }> {
    for (const { key, value } of this.shared.getRange(this.bounded(options))) yield { key: this.inner(key as Key), value };
  }

  *getKeys(options: RangeOptions = {}): Generator<Key> {
    for (const key of this.shared.getKeys(this.bounded(options))) yield this.inner(key as Key);
  }

  getKeysCount(options: RangeOptions = {}): number {
    let count = 0;
    for (const _key of this.shared.getKeys(this.bounded(options))) count += 1;
    return count;
  }

  /** Removes every entry of the owner (inside a write transaction); returns how many there were. */
  clear(): number {
    const keys = [...this.shared.getKeys({ start: this.range.start, end: this.range.end })];
    for (const key of keys) void this.shared.remove(key as Key);
    return keys.length;
  }

  /** Range options on the shared table: the owner's bounds, narrowed by the caller's (reverse walks start high). */
  private bounded(options: RangeOptions): RangeOptions {
    const { start, end, reverse } = options;
    const low = reverse ? end : start;
    const high = reverse ? start : end;
    const lowOuter = low === undefined ? this.range.start : this.outer(low as Key);
    // A reverse walk's start is inclusive: bound it just below the next owner's first key.
    const highOuter = high === undefined ? (reverse ? this.lastKeyBound() : this.range.end) : this.outer(high as Key);
    return { ...options, start: (reverse ? highOuter : lowOuter) as never, end: (reverse ? lowOuter : highOuter) as never };
  }

  /** The greatest key a reverse walk may start at: below `range.end`, above every key of the owner. */
  private lastKeyBound(): Key {
    if (this.binary) return Buffer.concat([this.prefix as Buffer, Buffer.alloc(64, 0xff)]);
    return `${this.prefix as string}\uffff`;
  }
}
