/**
 * The state API of ordered-state kinds: reads and writes of the instance's own table inside the
 * lane's write transaction, each write recording its inverse (the previous value, or its absence)
 * under the block being applied. `undo` replays a block's inverses in reverse — the state returns
 * exactly to what it was, without re-running anything — and finality drops them.
 *
 * Undo record: key u64 block ‖ u32 ordinal; value [u8 had-previous][u16 key length][key][previous value].
 */
import type { BinaryTable } from '../../../store/env.js';
import { u64Key } from '../../../store/keys.js';

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

function undoKey(block: number, ordinal: number): Buffer {
  // Block numbers are safe integers: the u64 as two u32 halves, without a BigInt per inverse.
  const key = Buffer.allocUnsafe(12);
  key.writeUInt32BE(Math.floor(block / 2 ** 32), 0);
  key.writeUInt32BE(block >>> 0, 4);
  key.writeUInt32BE(ordinal, 8);
  return key;
}

function encodeInverse(key: Buffer, previous: Buffer | undefined): Buffer {
  const out = Buffer.allocUnsafe(3 + key.length + (previous?.length ?? 0));
  out[0] = previous === undefined ? 0 : 1;
  out.writeUInt16BE(key.length, 1);
  key.copy(out, 3);
  previous?.copy(out, 3 + key.length);
  return out;
}

export interface Inverse {
  readonly key: Buffer;
  /** The value before the write; undefined when the key was absent. */
  readonly previous: Buffer | undefined;
}

function decodeInverse(bytes: Buffer): Inverse {
  const length = bytes.readUInt16BE(1);
  const key = Buffer.from(bytes.subarray(3, 3 + length));
  return { key, previous: bytes[0] === 1 ? Buffer.from(bytes.subarray(3 + length)) : undefined };
}

/** The key of a stored inverse alone, as latin1 text (what finality needs: which rows a block touched). */
function inverseKeyId(bytes: Uint8Array): string {
  const length = (bytes[1]! << 8) | bytes[2]!;
  return Buffer.from(bytes.buffer, bytes.byteOffset + 3, length).toString('latin1');
}

/** The state API for one block being applied; `recordInverses` false for finalized blocks (they are never undone). */
export function recordingState(table: BinaryTable, undo: BinaryTable, block: number, recordInverses: boolean): StateApi {
  let ordinal = 0;
  const recorded = new Set<string>();
  const record = (key: Buffer) => {
    if (!recordInverses) return;
    // Only the first write of a key in a block matters: undo restores the value before the block.
    const id = key.toString('latin1');
    if (recorded.has(id)) return;
    recorded.add(id);
    const previous = table.getBinary(key);
    undo.put(undoKey(block, ordinal), encodeInverse(key, previous === undefined ? undefined : Buffer.from(previous)));
    ordinal += 1;
  };
  return {
    get: (key) => {
      const value = table.getBinary(key);
      return value === undefined ? undefined : Buffer.from(value);
    },
    put: (key, value) => {
      record(key);
      table.put(key, value);
    },
    remove: (key) => {
      record(key);
      table.remove(key);
    },
  };
}

/** Restores the state before `block` (each restored value through `restore`) and returns what each key was restored to, in reverse write order. */
export function undoBlock(table: BinaryTable, undo: BinaryTable, block: number, restore: (value: Buffer) => Buffer = (value) => value): Inverse[] {
  const restored: Inverse[] = [];
  const entries = [...undo.getRange({ start: u64Key(block), end: u64Key(block + 1) })];
  for (let i = entries.length - 1; i >= 0; i -= 1) {
    const recorded = decodeInverse(Buffer.from(entries[i]!.value));
    const inverse = recorded.previous === undefined ? recorded : { key: recorded.key, previous: restore(recorded.previous) };
    if (inverse.previous === undefined) table.remove(inverse.key);
    else table.put(inverse.key, inverse.previous);
    undo.remove(entries[i]!.key);
    restored.push(inverse);
  }
  return restored;
}

/** Drops the inverses of blocks up to `through` (finalized: never undone) and returns the keys they touched. */
export function dropInverses(undo: BinaryTable, through: number): Buffer[] {
  return [...dropInverseIds(undo, through)].map((id) => Buffer.from(id, 'latin1'));
}

/** dropInverses, the keys as latin1 text. */
function dropInverseIds(undo: BinaryTable, through: number, ids: Set<string> = new Set()): Set<string> {
  const dropped: Buffer[] = [];
  for (const { key, value } of undo.getRange({ end: u64Key(through + 1) })) {
    ids.add(inverseKeyId(value));
    dropped.push(Buffer.from(key));
  }
  for (const key of dropped) undo.remove(key);
  return ids;
}

/**
 * The state rows as they were after block `block`: the current rows with the first recorded inverse
 * of every key written by a later block applied (that is the value before those blocks). In key order.
 */
export function stateAsOf(table: BinaryTable, undo: BinaryTable, block: number, restore: (value: Buffer) => Buffer = (value) => value): Array<[Buffer, Buffer]> {
  const before = new Map<string, Inverse>();
  for (const { value } of undo.getRange({ start: u64Key(block + 1) })) {
    const inverse = decodeInverse(Buffer.from(value));
    const id = inverse.key.toString('hex');
    if (!before.has(id)) before.set(id, inverse);
  }
  const rows = new Map<string, [Buffer, Buffer]>();
  for (const { key, value } of table.getRange({})) rows.set(Buffer.from(key).toString('hex'), [Buffer.from(key), Buffer.from(value)]);
  for (const [id, inverse] of before) {
    if (inverse.previous === undefined) rows.delete(id);
    else rows.set(id, [inverse.key, restore(inverse.previous)]);
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
      recorded = [];
      for (const { key, value } of [...this.#undo.getRange({ start: u64Key(block), end: u64Key(block + 1) })]) {
        recorded.push(decodeInverse(Buffer.from(value)));
        this.#undo.remove(key);
      }
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
    return [...this.#dropInverseIds(through)].map((id) => Buffer.from(id, 'latin1'));
  }

  /** The latin1 ids of the keys whose inverses through `through` are dropped. */
  #dropInverseIds(through: number): Set<string> {
    const ids = dropInverseIds(this.#undo, through);
    for (const [block, inverses] of this.#inverses) {
      if (block > through) continue;
      for (const inverse of inverses) ids.add(inverse.key.toString('latin1'));
      this.#inverses.delete(block);
      this.#held -= inverses.length;
    }
    return ids;
  }

  /**
   * Blocks through `through` are final: drops their inverses and re-marks each row they touched with
   * `remark` (given a copy of the row; null leaves it as is): what `dropInverses` and a get and set per
   * key do, with the keys handled as text once.
   */
  finalize(through: number, remark: ((value: Buffer, through: number) => Buffer | null) | undefined): void {
    const ids = this.#dropInverseIds(through);
    if (remark === undefined) return;
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
      for (let i = 0; i < inverses.length; i += 1) this.#undo.put(undoKey(block, i), encodeInverse(inverses[i]!.key, inverses[i]!.previous));
    }
    this.#inverses.clear();
    this.#held = 0;
  }
}
