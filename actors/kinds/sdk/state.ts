/**
 * The state API of ordered-state kinds: reads and writes of the instance's own table inside the
 * lane's write transaction, each write recording its inverse (the previous value, or its absence)
 * under the block being applied. `undo` replays a block's inverses in reverse — the state returns
 * exactly to what it was, without re-running anything — and finality drops them.
 *
 * Undo records: one per block, its inverses in write order in one value (one put when the block is
 * applied, one read when it is undone or finalized, one delete): key u64 block ‖ u32 0xffffffff ‖ u32
 * count of inverses; value, per inverse, [u8 had-previous][u16 key length][key][u32 previous length]
 * [previous value]. Stores written by earlier versions hold one record per write (key u64 block ‖ u32
 * ordinal; value [u8 had-previous][u16 key length][key][previous value]): still read, in key order.
 * Every path writes through a StateBatch (a kind applied outside a lane commit gets one of its own).
 */
import type { BinaryTable } from '../../../store/store.js';
import { u64Key } from '../../../store/keys.js';
import { BLOCK_RECORD_KEY_BYTES, WRITE_RECORD_KEY_BYTES, blockRecordKey } from '../../../store/undo-records.js';

export interface StateApi {
  get(key: Buffer): Buffer | undefined;
  put(key: Buffer, value: Buffer): void;
  remove(key: Buffer): void;
}

/** A typed view over the state API: one value codec for the keys a kind gives it. */
export interface TypedState<T> {
  get(key: Buffer): T | undefined;
  put(key: Buffer, value: T): void;
  remove(key: Buffer): void;
}

export interface ValueCodec<T> {
  encode(value: T): Buffer;
  decode(bytes: Buffer): T;
}

export function typedState<T>(state: StateApi, codec: ValueCodec<T>): TypedState<T> {
  return {
    get: (key) => {
      const bytes = state.get(key);
      return bytes === undefined ? undefined : codec.decode(bytes);
    },
    put: (key, value) => state.put(key, codec.encode(value)),
    remove: (key) => state.remove(key),
  };
}

/** A block's inverses in write order, one after the other: [u8 had-previous][u16 key length][key][u32 previous length][previous]. */
function encodeBlockRecord(inverses: readonly Inverse[]): Buffer {
  let bytes = 0;
  for (const { key, previous } of inverses) bytes += 7 + key.length + (previous?.length ?? 0);
  const out = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (const { key, previous } of inverses) {
    out[at] = previous === undefined ? 0 : 1;
    out.writeUInt16BE(key.length, at + 1);
    key.copy(out, at + 3);
    at += 3 + key.length;
    out.writeUInt32BE(previous?.length ?? 0, at);
    at += 4;
    if (previous !== undefined) at += previous.copy(out, at);
  }
  return out;
}

export interface Inverse {
  readonly key: Buffer;
  /** The value before the write; undefined when the key was absent. */
  readonly previous: Buffer | undefined;
}

/**
 * The inverses of one stored entry, in write order, copied out of LMDB's buffer: a block's record, or one
 * write's record of an earlier version (key u64 block ‖ u32 ordinal, value [u8 had-previous][u16 key length][key][previous]).
 */
function decodeInverses(key: Uint8Array, value: Uint8Array, into: Inverse[] = []): Inverse[] {
  const bytes = Buffer.from(value);
  if (key.length === WRITE_RECORD_KEY_BYTES) {
    const length = bytes.readUInt16BE(1);
    into.push({ key: bytes.subarray(3, 3 + length), previous: bytes[0] === 1 ? bytes.subarray(3 + length) : undefined });
    return into;
  }
  if (key.length !== BLOCK_RECORD_KEY_BYTES) throw new Error(`undo table: unknown record key of ${key.length} bytes`);
  let at = 0;
  while (at < bytes.length) {
    const had = bytes[at] === 1;
    const length = bytes.readUInt16BE(at + 1);
    const inverseKey = bytes.subarray(at + 3, at + 3 + length);
    at += 3 + length;
    const previousLength = bytes.readUInt32BE(at);
    at += 4;
    into.push({ key: inverseKey, previous: had ? bytes.subarray(at, at + previousLength) : undefined });
    at += previousLength;
  }
  return into;
}

/** The keys of one stored entry's inverses, as latin1 text, read in place (what finality needs: which rows a block touched). */
function inverseKeyIds(key: Uint8Array, value: Uint8Array, ids: Set<string>): void {
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (key.length === WRITE_RECORD_KEY_BYTES) {
    ids.add(bytes.toString('latin1', 3, 3 + bytes.readUInt16BE(1)));
    return;
  }
  if (key.length !== BLOCK_RECORD_KEY_BYTES) throw new Error(`undo table: unknown record key of ${key.length} bytes`);
  let at = 0;
  while (at < bytes.length) {
    const length = bytes.readUInt16BE(at + 1);
    ids.add(bytes.toString('latin1', at + 3, at + 3 + length));
    at += 3 + length;
    at += 4 + bytes.readUInt32BE(at);
  }
}

/** The stored inverses of `block` in write order, removed from the table. */
function takeStoredInverses(undo: BinaryTable, block: number): Inverse[] {
  const recorded: Inverse[] = [];
  for (const { key, value } of [...undo.getRange({ start: u64Key(block), end: u64Key(block + 1) })]) {
    decodeInverses(key as Buffer, value as Buffer, recorded);
    undo.remove(key);
  }
  return recorded;
}

/**
 * Drops the stored inverses of blocks up to `through` (finalized: never undone), adding the keys they touched
 * to `ids` (latin1 text); with `ids` null, the records are deleted unread.
 */
function dropInverseIds(undo: BinaryTable, through: number, ids: Set<string> | null): void {
  const dropped: Buffer[] = [];
  if (ids === null) {
    for (const key of undo.getKeys({ end: u64Key(through + 1) })) dropped.push(Buffer.from(key as Buffer));
  } else {
    for (const { key, value } of undo.getRange({ end: u64Key(through + 1) })) {
      inverseKeyIds(key as Buffer, value as Buffer, ids);
      dropped.push(Buffer.from(key as Buffer));
    }
  }
  for (const key of dropped) undo.remove(key);
}

/**
 * The state rows as they were after block `block`: the current rows with the first recorded inverse
 * of every key written by a later block applied (that is the value before those blocks). In key order.
 */
export function stateAsOf(table: BinaryTable, undo: BinaryTable, block: number, restore: (value: Buffer) => Buffer = (value) => value): Array<[Buffer, Buffer]> {
  const before = new Map<string, Inverse>();
  for (const { key, value } of undo.getRange({ start: u64Key(block + 1) })) {
    for (const inverse of decodeInverses(key as Buffer, value as Buffer)) {
      const id = inverse.key.toString('hex');
      if (!before.has(id)) before.set(id, inverse);
    }
  }
  const rows = new Map<string, [Buffer, Buffer]>();
  for (const { key, value } of table.getRange({})) rows.set(Buffer.from(key).toString('hex'), [Buffer.from(key), Buffer.from(value)]);
  for (const [id, inverse] of before) {
    if (inverse.previous === undefined) rows.delete(id);
    else rows.set(id, [Buffer.from(inverse.key), restore(Buffer.from(inverse.previous))]);
  }
  return [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
}

/**
 * The writes of one lane commit (a batch of journal moves, one LMDB write transaction) held in memory
 * and written once at its end: a key written by many blocks of the batch is put once, and the inverses
 * of blocks finalized within the batch are never written at all. Reads see the batch first, then the
 * table; `undoBlock` and `dropInverses` see the inverses recorded in the batch and those stored by
 * earlier commits. Values are copied in and out, so a kind may reuse or change its buffers.
 *
 * `flush` must run inside the same write transaction before it commits, and before anything reads the
 * tables directly (a checkpoint's copy of the state). A batch is used by one commit and then dropped:
 * when the transaction aborts, so does everything the batch held.
 */
export class StateBatch {
  readonly #table: BinaryTable;
  readonly #undo: BinaryTable;
  /** Rows read or written in this batch by key (latin1 of the key bytes); value null: absent. Only dirty ones are written out. */
  readonly #rows = new Map<string, { readonly key: Buffer; value: Buffer | null; dirty: boolean }>();
  /** Inverses of blocks applied in this batch, in write order, not yet stored. */
  readonly #inverses = new Map<number, Inverse[]>();
  #held = 0;

  constructor(table: BinaryTable, undo: BinaryTable) {
    this.#table = table;
    this.#undo = undo;
  }

  /** Rows and inverses held in memory (the lane flushes past a bound). */
  get size(): number {
    return this.#rows.size + this.#held;
  }

  /** The row of `key`, read from the table once per batch. Its value is the batch's own: never handed out uncopied. */
  #row(key: Buffer, id: string): { readonly key: Buffer; value: Buffer | null; dirty: boolean } {
    let row = this.#rows.get(id);
    if (row === undefined) {
      // getBinary returns a copy of its own (lmdb-js), which the batch keeps.
      const stored = this.#table.getBinary(key);
      row = { key: Buffer.from(key), value: stored === undefined ? null : stored, dirty: false };
      this.#rows.set(id, row);
    }
    return row;
  }

  get(key: Buffer): Buffer | undefined {
    const { value } = this.#row(key, key.toString('latin1'));
    return value === null ? undefined : Buffer.from(value);
  }

  /** Writes (or, with null, removes) a row; records no inverse. */
  set(key: Buffer, value: Buffer | null): void {
    this.#set(key, key.toString('latin1'), value === null ? null : Buffer.from(value));
  }

  /** Stores `value` (the batch's own from now on) as the row of `key`, whose latin1 text is `id`. */
  #set(key: Buffer, id: string, value: Buffer | null): void {
    const row = this.#rows.get(id);
    if (row !== undefined) {
      row.value = value;
      row.dirty = true;
    } else {
      this.#rows.set(id, { key: Buffer.from(key), value, dirty: true });
    }
  }

  /** The state API for one block being applied (see recordingState). */
  recording(block: number, recordInverses: boolean): StateApi {
    const recorded = new Set<string>();
    let inverses: Inverse[] | undefined;
    const record = (key: Buffer, id: string) => {
      if (!recordInverses) return;
      if (recorded.has(id)) return;
      recorded.add(id);
      if (inverses === undefined) {
        inverses = this.#inverses.get(block);
        if (inverses === undefined) this.#inverses.set(block, (inverses = []));
      }
      // The batch's values are never changed in place (set stores a copy): the inverse may share it.
      const row = this.#row(key, id);
      inverses.push({ key: row.key, previous: row.value ?? undefined });
      this.#held += 1;
    };
    return {
      get: (key) => this.get(key),
      put: (key, value) => {
        const id = key.toString('latin1');
        record(key, id);
        this.#set(key, id, Buffer.from(value));
      },
      remove: (key) => {
        const id = key.toString('latin1');
        record(key, id);
        this.#set(key, id, null);
      },
    };
  }

  /** As `undoBlock`, through the batch. */
  undoBlock(block: number, restore: (value: Buffer) => Buffer = (value) => value): Inverse[] {
    let recorded = this.#inverses.get(block);
    if (recorded !== undefined) {
      this.#inverses.delete(block);
      this.#held -= recorded.length;
    } else {
      recorded = takeStoredInverses(this.#undo, block);
    }
    const restored: Inverse[] = [];
    for (let i = recorded.length - 1; i >= 0; i -= 1) {
      // Recorded inverses share the batch's buffers: the kind's functions get copies.
      const { key, previous } = recorded[i]!;
      const inverse = { key: Buffer.from(key), previous: previous === undefined ? undefined : restore(Buffer.from(previous)) };
      this.set(inverse.key, inverse.previous ?? null);
      restored.push(inverse);
    }
    return restored;
  }

  /** As `dropInverses`, through the batch. */
  dropInverses(through: number): Buffer[] {
    const ids = new Set<string>();
    this.#dropInverseIds(through, ids);
    return [...ids].map((id) => Buffer.from(id, 'latin1'));
  }

  /** Drops the inverses through `through`, adding the latin1 ids of the keys they touched to `ids` (null: not wanted). */
  #dropInverseIds(through: number, ids: Set<string> | null): void {
    dropInverseIds(this.#undo, through, ids);
    for (const [block, inverses] of this.#inverses) {
      if (block > through) continue;
      if (ids !== null) for (const inverse of inverses) ids.add(inverse.key.toString('latin1'));
      this.#inverses.delete(block);
      this.#held -= inverses.length;
    }
  }

  /**
   * Blocks through `through` are final: drops their inverses and re-marks each row they touched with
   * `remark` (given a copy of the row; null leaves it as is): what `dropInverses` and a get and set per
   * key do, with the keys handled as text once.
   */
  finalize(through: number, remark: ((value: Buffer, through: number) => Buffer | null) | undefined): void {
    // A kind that re-marks nothing (erc20 derives finality where it serves a row) drops the records unread.
    if (remark === undefined) {
      this.#dropInverseIds(through, null);
      return;
    }
    const ids = new Set<string>();
    this.#dropInverseIds(through, ids);
    for (const id of ids) {
      const row = this.#row(Buffer.from(id, 'latin1'), id);
      if (row.value === null) continue;
      // Inverses may share the row's buffer: the kind's function gets a copy, which it may change and return.
      const remarked = remark(Buffer.from(row.value), through);
      if (remarked === null) continue;
      row.value = Buffer.from(remarked);
      row.dirty = true;
    }
  }

  /** Writes what the batch holds into the tables (inside the write transaction) and empties it. */
  flush(): void {
    for (const { key, value, dirty } of this.#rows.values()) {
      if (!dirty) continue;
      if (value === null) this.#table.remove(key);
      else this.#table.put(key, value);
    }
    this.#rows.clear();
    for (const [block, inverses] of this.#inverses) {
      if (inverses.length > 0) this.#undo.put(blockRecordKey(block, inverses.length), encodeBlockRecord(inverses));
    }
    this.#inverses.clear();
    this.#held = 0;
  }
}
