/**
 * A compacted copy of a whole store: every table's entries written, in key order, into a fresh
 * database (MDB_APPEND packs every page full), byte for byte, in bounded write transactions.
 * Used by `db compact` and `db backup`. Not LMDB's own compacting copy (mdb_env_copy with
 * MDB_CP_COMPACT): with lmdb-js 3.5 a database made that way crashes the process (segfault, or an
 * mdb_page_alloc assertion) once enough of its values are overwritten, which the node does all the
 * time (test/store/commands.test.ts).
 */
import { listTableNames, openEnvironment, type RootEnvironment } from './store.js';

/** Entries per write transaction of the copy: bounded memory however large the store is. */
const COPY_BATCH_ENTRIES = 20_000;
const COPY_BATCH_BYTES = 64 * 1024 * 1024;

/** Writes every table of `source` into a new database at `copyPath`, byte for byte, in key order. */
export async function copyEntries(source: RootEnvironment, copyPath: string): Promise<void> {
  const target = openEnvironment(copyPath, false);
  try {
    for (const name of listTableNames(source)) {
      const raw = { name, keyEncoding: 'binary', encoding: 'binary', compression: false, cache: false } as const;
      const from = source.openDB<Buffer, Buffer>(raw);
      const to = target.openDB<Buffer, Buffer>(raw);
      const entries = from.getRange()[Symbol.iterator]();
      for (let done = false; !done;) {
        target.transactionSync(() => {
          let count = 0;
          let bytes = 0;
          while (count < COPY_BATCH_ENTRIES && bytes < COPY_BATCH_BYTES) {
            const next = entries.next();
            if (next.done === true) { done = true; return; }
            const { key, value } = next.value;
            // Keys arrive in LMDB's order, so appending is valid and packs every page full.
            to.putSync(key, value, { append: true });
            count += 1;
            bytes += key.length + value.length;
          }
        });
      }
    }
    await target.flushed;
  } finally {
    await target.close();
  }
}
