/**
 * Keccak-256 of many independent inputs per call. Verification hashes a block's trie nodes, header, uncles and new
 * bloom values (~450 inputs, ~190 KB per mainnet block); one by one through WebAssembly that was about half of a
 * block's verification CPU, most of it per-call overhead on short inputs.
 *
 * A `HashPlan` collects inputs in one arena and "jobs" `[start, length, dest, level]`: keccak256 of
 * `arena[start, start+length)` goes to `arena[dest, dest+32)`. Jobs run level by level, lowest first, so a trie
 * node (level n+1) can hold its children's hashes (level ≤ n) at their `dest`, written into it before it is hashed:
 * a whole trie is planned in one pass and hashed in one call.
 *
 * The hashing runs in the native addon `native/keccak` (built by `npm ci`, see README) when it loaded: it hashes
 * 4 (AVX2) or 8 (AVX-512) inputs at once in SIMD lanes, picked at run time from what the CPU has, else one at a
 * time in portable C++. Without the addon (no compiler at install, another platform) the same plan runs through
 * hash-wasm's WebAssembly Keccak (`keccak.ts`), with the same results. `CDN_KECCAK=wasm|scalar|avx2x4|avx512x4|
 * avx512x8` in the environment forces one (for A/B measurements and tests); an implementation the CPU lacks is refused
 * at start-up with the list of those it has.
 */
import { loadNativeAddon } from '../../runtime/native-addon.js';
import { keccak256 } from './keccak.js';

interface KeccakAddon {
  implementations(): string[];
  hashJobs(arena: Uint8Array, jobs: Uint32Array, count: number, implementation: number): void;
  /** Absent from builds before it was added. */
  bloomBits?(bytes: Uint8Array, values: Uint32Array, count: number, blooms: Uint8Array, blockBloom: Uint8Array, implementation: number): void;
}

const loaded = loadNativeAddon<KeccakAddon>('keccak', 'keccak_batch', import.meta.url);

/** Implementations usable here: the addon's (those the CPU runs) and `wasm`, fastest last. */
export const KECCAK_IMPLEMENTATIONS: readonly string[] = ['wasm', ...(loaded.addon?.implementations() ?? [])];

function chooseImplementation(): string {
  const forced = process.env.CDN_KECCAK;
  if (forced !== undefined && forced !== '') {
    if (!KECCAK_IMPLEMENTATIONS.includes(forced)) {
      throw new Error(`CDN_KECCAK=${forced}: not available here; expected one of ${KECCAK_IMPLEMENTATIONS.join(', ')}${loaded.reason ? ` (${loaded.reason})` : ''}`);
    }
    return forced;
  }
  return KECCAK_IMPLEMENTATIONS.at(-1)!;
}

let implementation = chooseImplementation();
/** The addon's index of `implementation` (its list is `KECCAK_IMPLEMENTATIONS` without `wasm`). */
let addonIndex = KECCAK_IMPLEMENTATIONS.indexOf(implementation) - 1;

/** The implementation batches run on now (`wasm`, `scalar`, `avx2x4`, `avx512x4` or `avx512x8`). */
export function keccakImplementation(): string {
  return implementation;
}

/** Why the native addon is not in use, or undefined when it is loaded. */
export function keccakAddonProblem(): string | undefined {
  return loaded.reason;
}

/** Switches the implementation of this thread (tests and benches; the node keeps the default). */
export function useKeccakImplementation(name: string): void {
  if (!KECCAK_IMPLEMENTATIONS.includes(name)) throw new Error(`keccak implementation ${name} is not available here; expected one of ${KECCAK_IMPLEMENTATIONS.join(', ')}`);
  implementation = name;
  addonIndex = KECCAK_IMPLEMENTATIONS.indexOf(name) - 1;
}

function hashJobsWasm(arena: Uint8Array, jobs: Uint32Array, count: number): void {
  const perLevel: number[] = [];
  for (let k = 0; k < count; k++) {
    const start = jobs[4 * k]!, length = jobs[4 * k + 1]!, dest = jobs[4 * k + 2]!, level = jobs[4 * k + 3]!;
    if (start + length > arena.length || dest + 32 > arena.length) throw new RangeError("a job's range lies outside the arena");
    if (level > 255) throw new RangeError("a job's level is above 255");
    while (perLevel.length <= level) perLevel.push(0);
    perLevel[level]! += 1;
  }
  // A counting sort by level, then each job in turn.
  const starts = [0];
  for (let level = 0; level < perLevel.length; level++) starts.push(starts[level]! + perLevel[level]!);
  const order = new Uint32Array(count);
  for (let k = 0; k < count; k++) order[starts[jobs[4 * k + 3]!]!++] = k;
  for (const k of order) {
    const start = jobs[4 * k]!;
    arena.set(keccak256(arena.subarray(start, start + jobs[4 * k + 1]!)), jobs[4 * k + 2]!);
  }
}

/** Runs `count` jobs (`[start, length, dest, level]` each) over `arena` with the current implementation. */
export function hashJobs(arena: Uint8Array, jobs: Uint32Array, count: number): void {
  if (count === 0) return;
  if (implementation === 'wasm') hashJobsWasm(arena, jobs, count);
  else loaded.addon!.hashJobs(arena, jobs, count, addonIndex);
}

/**
 * Logs-bloom bits of `count` values in one native batch: value k is `values[3k … 3k+2]` = `[start, length, bloom]`,
 * and keccak256(bytes[start, start+length)) sets its three bits in `blooms[bloom, bloom+256)` and in `blockBloom`.
 * Returns false, doing nothing, when batches run on `wasm` or the addon lacks it (`bloom.ts` then sets them itself).
 */
export function bloomBitsNative(bytes: Uint8Array, values: Uint32Array, count: number, blooms: Uint8Array, blockBloom: Uint8Array): boolean {
  const bloomBits = loaded.addon?.bloomBits;
  if (implementation === 'wasm' || bloomBits === undefined) return false;
  bloomBits(bytes, values, count, blooms, blockBloom, addonIndex);
  return true;
}

const INITIAL_ARENA_BYTES = 1 << 18;
const INITIAL_JOBS = 1024;

/**
 * Inputs and hash jobs of one batch. Offsets, never views, refer into the arena: `reserve` may replace it with a
 * larger copy, so read `plan.arena` after reserving. `run` hashes the jobs added since the last run.
 */
export class HashPlan {
  arena = new Uint8Array(INITIAL_ARENA_BYTES);
  /** Bytes of the arena in use. */
  size = 0;
  jobs = new Uint32Array(4 * INITIAL_JOBS);
  /** Jobs planned. */
  count = 0;
  /** Jobs already run. */
  private ran = 0;

  reset(): void {
    this.size = 0;
    this.count = 0;
    this.ran = 0;
  }

  /** Reserves `bytes` at the arena's end (contents undefined); returns their offset. */
  reserve(bytes: number): number {
    const at = this.size;
    const end = at + bytes;
    if (end > this.arena.length) {
      let length = this.arena.length * 2;
      while (length < end) length *= 2;
      const arena = new Uint8Array(length);
      arena.set(this.arena.subarray(0, at));
      this.arena = arena;
    }
    this.size = end;
    return at;
  }

  /** Copies `bytes` to the arena's end; returns their offset. */
  append(bytes: Uint8Array): number {
    const at = this.reserve(bytes.length);
    this.arena.set(bytes, at);
    return at;
  }

  /** Plans keccak256(arena[start, start+length)) into arena[dest, dest+32) at `level`; returns the job's index. */
  addJob(start: number, length: number, dest: number, level: number): number {
    if (4 * (this.count + 1) > this.jobs.length) {
      const jobs = new Uint32Array(this.jobs.length * 2);
      jobs.set(this.jobs);
      this.jobs = jobs;
    }
    const at = 4 * this.count;
    this.jobs[at] = start;
    this.jobs[at + 1] = length;
    this.jobs[at + 2] = dest;
    this.jobs[at + 3] = level;
    return this.count++;
  }

  /** Sets where job `job` writes its hash (a parent node learns it only once it is written). */
  setDest(job: number, dest: number): void {
    this.jobs[4 * job + 2] = dest;
  }

  /** Plans the hash of `bytes` (copied) at level 0; returns where the hash will be. */
  hashOf(bytes: Uint8Array): number {
    const start = this.append(bytes);
    const dest = this.reserve(32);
    this.addJob(start, bytes.length, dest, 0);
    return dest;
  }

  /** `hashOf(bytes.subarray(start, end))` without the view (short values are copied byte by byte). */
  hashOfRange(bytes: Uint8Array, start: number, end: number): number {
    const length = end - start;
    const at = this.reserve(length + 32);
    const arena = this.arena;
    if (length <= 64) for (let i = 0; i < length; i++) arena[at + i] = bytes[start + i]!;
    else arena.set(bytes.subarray(start, end), at);
    this.addJob(at, length, at + length, 0);
    return at + length;
  }

  /** Hashes the jobs added since the last run. */
  run(): void {
    if (this.count === this.ran) return;
    hashJobs(this.arena, this.ran === 0 ? this.jobs : this.jobs.subarray(4 * this.ran), this.count - this.ran);
    this.ran = this.count;
  }

  /** The 32 bytes at `dest` (a view into the arena: copy it to keep it past the next reset). */
  hashAt(dest: number): Uint8Array {
    return this.arena.subarray(dest, dest + 32);
  }
}

const manyPlan = new HashPlan();

/** keccak256 of each input, in one batch. */
export function keccak256Many(inputs: readonly Uint8Array[]): Uint8Array[] {
  manyPlan.reset();
  const dests = inputs.map((input) => manyPlan.hashOf(input));
  manyPlan.run();
  return dests.map((dest) => manyPlan.arena.slice(dest, dest + 32));
}
