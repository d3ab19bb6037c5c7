/**
 * Gives back the node's residency of the LMDB store's memory map (native/map-release) every second, and runs glibc's
 * malloc_trim every 10 s (free memory the malloc arenas keep otherwise grew with a backfill's range).
 *
 * lmdb-js opens the store without writemap: writes go to the file with pwrite, and a page becomes resident in this
 * process only when something reads it through the map — a processor lane reading back each block's material, a
 * write transaction walking a table's B-tree to the leaf it writes (a random one in the hash-keyed chain tables).
 * Over a long cold backfill that is the whole store, once each, and a shared file mapping keeps every page it faulted
 * in mapped until the process unmaps it: the node's RSS grew with the range (4.4 GiB after a 1M-block backfill, 3.8
 * of it the map).
 *
 * `madvise(MADV_DONTNEED)` on a shared file mapping only removes this process's page-table entries: the pages stay in
 * the page cache (and on disk) and the next read through the map faults them back in, with the file's current
 * contents (madvise(2); Documentation/admin-guide/mm/concepts.rst). So it is safe under concurrent read transactions
 * on every worker thread: a reader racing with it refaults. The one hazard is an address range that is unmapped
 * between reading /proc/self/maps and the advice; lmdb-js never unmaps the store while the node runs (it keeps old
 * maps across a resize, and shares one environment per file across threads with a reference count), and the main
 * thread, which releases, holds its reference until after this job stops.
 *
 * `CDN_MAP_RELEASE=off` turns it off.
 */
import { loadNativeAddon, type NativeAddonLoad } from '../runtime/native-addon.js';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { storePath } from './store-paths.js';

interface MapReleaseAddon {
  release(path: string): { mappings: number; mappedBytes: number; fileResidentBeforeBytes: number; fileResidentAfterBytes: number };
  trim(): { anonResidentBeforeBytes: number; anonResidentAfterBytes: number };
}

/**
 * How often the map's residency is given back. A fault on one page of the map maps its whole aligned 64 KiB group
 * (the kernel's fault-around, when the neighbours are in the page cache, as freshly written pages are), so a cold
 * backfill that touches a random leaf of each hash-keyed chain table per block written, and reads each block back in
 * the processor lanes, maps up to ~200 MB of the map a second. Every second, and every quarter second while a release
 * gives back more than 32 MiB: what stays resident is bounded by a fraction of a second's touches, whatever the range.
 * A release of 64 MB costs ~1.2 ms of the main thread; what it drops and is touched again is faulted back in from
 * the page cache (~0.8 µs a page: ~16 % more CPU per block on empty synthetic blocks, bench/RESULTS.md).
 */
export const MAP_RELEASE_INTERVAL_MS = 1_000;
const BUSY_INTERVAL_MS = 250;
const BUSY_BYTES = 32 * 1024 ** 2;
/** How often malloc_trim runs too (it takes each malloc arena's lock while it walks it). */
const TRIM_INTERVAL_MS = 10_000;

function loadAddon(): NativeAddonLoad<MapReleaseAddon> {
  if (process.env.CDN_MAP_RELEASE === 'off') return { addon: null, reason: 'CDN_MAP_RELEASE=off' };
  if (process.platform !== 'linux') return { addon: null, reason: `not on ${process.platform} (it reads /proc/self/maps)` };
  return loadNativeAddon<MapReleaseAddon>('map-release', 'map_release', import.meta.url);
}

export interface MapReleaseStats {
  /** Releases run. */
  readonly releases: number;
  /** File-backed resident bytes of the process given back, summed over releases (RssFile before minus after). */
  readonly releasedBytes: number;
  /** File-backed resident bytes right after the last release (0 before the first). */
  readonly residentAfterBytes: number;
  /** Anonymous resident bytes malloc_trim gave back, summed over releases. */
  readonly trimmedBytes: number;
}

export interface MapRelease {
  /** Null when active, else why not. */
  readonly inactive: string | null;
  stats(): MapReleaseStats;
  /** Runs one release now (the interval's job; tests call it directly). */
  releaseNow(): void;
  stop(): void;
}

export interface MapReleaseOptions {
  readonly dataDir: string;
  readonly intervalMs?: number;
  /** Called once if a release fails; the job then stops. */
  readonly onError?: (error: Error) => void;
}

/** Starts the periodic release of the store's map at `dataDir`. Call `stop()` before the store closes. */
export function startMapRelease(options: MapReleaseOptions): MapRelease {
  const loaded = loadAddon();
  let releases = 0;
  let releasedBytes = 0;
  let residentAfterBytes = 0;
  let trimmedBytes = 0;
  const stats = (): MapReleaseStats => ({ releases, releasedBytes, residentAfterBytes, trimmedBytes });
  if (loaded.addon === null) return { inactive: loaded.reason ?? 'unavailable', stats, releaseNow() {}, stop() {} };
  const addon = loaded.addon;
  // /proc/self/maps names the file by its resolved path.
  const file = realpathSync(join(storePath(options.dataDir), 'data.mdb'));
  const interval = options.intervalMs ?? MAP_RELEASE_INTERVAL_MS;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let lastTrim = 0;
  /** One release; answers the bytes it gave back. */
  const releaseNow = (): number => {
    const result = addon.release(file);
    releases++;
    let released = 0;
    if (result.fileResidentBeforeBytes >= 0 && result.fileResidentAfterBytes >= 0) {
      released = Math.max(0, result.fileResidentBeforeBytes - result.fileResidentAfterBytes);
      releasedBytes += released;
      residentAfterBytes = result.fileResidentAfterBytes;
    }
    if (process.env.CDN_MALLOC_TRIM !== 'off' && Date.now() - lastTrim >= TRIM_INTERVAL_MS) {
      lastTrim = Date.now();
      const trimmed = addon.trim();
      if (trimmed.anonResidentBeforeBytes >= 0 && trimmed.anonResidentAfterBytes >= 0) trimmedBytes += Math.max(0, trimmed.anonResidentBeforeBytes - trimmed.anonResidentAfterBytes);
    }
    return released;
  };
  const schedule = (delayMs: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      let released: number;
      try {
        released = releaseNow();
      } catch (error) {
        stopped = true;
        options.onError?.(error as Error);
        return;
      }
      schedule(released > BUSY_BYTES ? Math.min(interval, BUSY_INTERVAL_MS) : interval);
    }, delayMs);
    timer.unref();
  };
  schedule(interval);
  return {
    inactive: null,
    stats,
    releaseNow() { releaseNow(); },
    stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
}
