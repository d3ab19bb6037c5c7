/**
 * Entry point of every actor worker thread: loads the native addons every worker uses (lmdb-js for
 * the store, msgpackr's native extension for the mailbox codec) before anything else runs, then the
 * worker host (worker-host.ts).
 *
 * Why first. Node 20's V8 can deadlock when a worker allocates inside an addon's initializer (lmdb-js
 * creates Buffers there; a Buffer's prototype change takes V8's transition-array lock, and the
 * allocation can start a garbage collection that waits for every thread of the isolate to reach a
 * safepoint) while a concurrent optimizing compile of the same isolate waits for that lock. The
 * worker then holds Node's process-wide addon-load mutex forever, every other worker that loads an
 * addon waits behind it, and the process cannot exit because it cannot join them. Seen once in CI
 * (gdb: the worker in `napi_register_module_v1` of lmdb-js → `Heap::StartIncrementalMarking` →
 * safepoint; a compile job in `JSFunctionData::Cache` on a read lock; four workers on
 * `dlib_load_mutex`). At the very start of a worker no function has run often enough to be
 * optimized, so nothing compiles concurrently while the addons initialize.
 */
await import('lmdb');
await import('msgpackr');
await import('./worker-host.js');
