/**
 * Where Era1 files come from: a directory, or an HTTP base URL laid out as the community archives are
 * (eth-clients/history-endpoints): an index page at the base URL linking every file, and `checksums.txt` beside it
 * with each file's SHA-256 — one per line, in file order (line N is the file of epoch N), or `<sha256> <name>`
 * lines as `sha256sum` writes them; hex with or without `0x`.
 *
 * Files are named `<network>-<epoch, 5 digits>-<first 4 bytes of the accumulator root, hex>.era1`; only
 * `mainnet-…` files are taken (the node ships mainnet's roots only). A file of an HTTP archive is downloaded into
 * the cache directory under a temporary name while its SHA-256 is computed, and kept only when it matches
 * `checksums.txt`; at most `cacheFiles` downloaded files are kept (the least recently used go first). A directory's
 * files are read where they are.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Era1ArchiveError } from './errors.js';

export interface Era1Name {
  readonly name: string;
  readonly epoch: number;
  /** The file name's 8 hex digits: the first 4 bytes of its accumulator root. */
  readonly rootPrefix: string;
}

export interface Era1Listing {
  /** Every mainnet Era1 file the archive has, by epoch (an epoch may have more than one candidate). */
  readonly files: ReadonlyMap<number, readonly Era1Name[]>;
}

export type ArchiveLog = (level: 'info' | 'warn', message: string, fields: Record<string, unknown>) => void;

export interface Era1ArchiveOptions {
  /** A directory of Era1 files; or */
  readonly path?: string;
  /** an HTTP(S) base URL in the community archives' layout. */
  readonly url?: string;
  /** kind url: where downloaded files are kept, and how many. */
  readonly cacheDir?: string;
  readonly cacheFiles?: number;
  /** kind url: a request (the listing, or a download without a byte arriving) fails after this long; then retried. */
  readonly timeoutMs?: number;
  readonly maxRetries?: number;
  readonly backoffInitialMs?: number;
  readonly backoffMaxMs?: number;
  readonly signal?: AbortSignal;
  readonly log?: ArchiveLog;
}

export interface Era1Archive {
  /** The directory, or the base URL (as configured; the node's config holds no secrets in it). */
  readonly location: string;
  /** Lists the archive's files (a directory is read again each time; an HTTP listing is kept once fetched). */
  list(refresh?: boolean): Promise<Era1Listing>;
  /** A local path of the file, downloaded and its checksum checked first when the archive is HTTP. */
  localPath(file: Era1Name): Promise<string>;
}

const FILE_NAME = /^mainnet-(\d{5})-([0-9a-f]{8})\.era1$/;
const FILE_NAMES_IN_TEXT = /mainnet-\d{5}-[0-9a-f]{8}\.era1/g;

/** A parsed file name, or null when the name is not a mainnet Era1 file's. */
export function parseEra1Name(name: string): Era1Name | null {
  const match = FILE_NAME.exec(name);
  return match ? { name, epoch: Number(match[1]), rootPrefix: match[2]! } : null;
}

function listingOf(names: Iterable<string>): Era1Listing {
  const files = new Map<number, Era1Name[]>();
  for (const name of names) {
    const parsed = parseEra1Name(name);
    if (!parsed) continue;
    const list = files.get(parsed.epoch) ?? [];
    if (!list.some((file) => file.name === name)) list.push(parsed);
    files.set(parsed.epoch, list);
  }
  return { files };
}

export function createEra1Archive(options: Era1ArchiveOptions): Era1Archive {
  if (options.path !== undefined && options.path !== '') return directoryArchive(options.path);
  if (options.url !== undefined && options.url !== '') return httpArchive(options.url, options);
  throw new Era1ArchiveError('an Era1 archive needs a directory (path) or an HTTP base URL (url)');
}

function directoryArchive(path: string): Era1Archive {
  return {
    location: path,
    async list() {
      try {
        return listingOf(await readdir(path));
      } catch (error) {
        throw new Era1ArchiveError(`cannot list the Era1 directory ${path}: ${(error as Error).message}`);
      }
    },
    async localPath(file) {
      return join(path, file.name);
    },
  };
}

/**
 * `checksums.txt` → SHA-256 (lowercase hex, no 0x) by file name, or by line number (the epoch) for bare lines.
 * Blank lines and `#` comments are skipped (a bare line still counts as its epoch's).
 */
export function parseChecksums(text: string): { byName: Map<string, string>; byEpoch: Map<number, string> } {
  const byName = new Map<string, string>();
  const byEpoch = new Map<number, string>();
  let epoch = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [digest, name] = line.split(/\s+/) as [string, string | undefined];
    const hex = digest.toLowerCase().replace(/^0x/, '');
    if (!/^[0-9a-f]{64}$/.test(hex)) throw new Era1ArchiveError(`checksums.txt line "${line.slice(0, 100)}" does not start with a SHA-256 in hex`);
    if (name !== undefined) byName.set(name.replace(/^\*/, '').replace(/^\.\//, ''), hex);
    else byEpoch.set(epoch, hex);
    epoch += 1;
  }
  return { byName, byEpoch };
}

function httpArchive(url: string, options: Era1ArchiveOptions): Era1Archive {
  const base = url.endsWith('/') ? url : `${url}/`;
  const cacheDir = options.cacheDir ?? '';
  if (cacheDir === '') throw new Era1ArchiveError('an HTTP Era1 archive needs a cache directory');
  const cacheFiles = Math.max(1, options.cacheFiles ?? 2);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxRetries = options.maxRetries ?? 3;
  const backoffInitialMs = options.backoffInitialMs ?? 200;
  const backoffMaxMs = options.backoffMaxMs ?? 10_000;
  mkdirSync(cacheDir, { recursive: true });
  // A download that did not finish (the node stopped) starts over; whole files stay, in their order of use.
  const used = new Map<string, number>();
  for (const entry of readdirSync(cacheDir)) {
    if (entry.endsWith('.part')) rmSync(join(cacheDir, entry), { force: true });
    else if (parseEra1Name(entry)) used.set(entry, used.size);
  }
  let tick = used.size;
  let listing: Promise<{ listing: Era1Listing; checksums: ReturnType<typeof parseChecksums> }> | null = null;
  const downloads = new Map<string, Promise<string>>();

  async function withRetries<T>(what: string, attempt: () => Promise<T>): Promise<T> {
    let delay = backoffInitialMs;
    for (let tries = 0; ; tries++) {
      try {
        return await attempt();
      } catch (error) {
        const final = error instanceof Era1ArchiveError && !error.retryable;
        if (final || tries >= maxRetries || options.signal?.aborted) throw error instanceof Era1ArchiveError ? error : new Era1ArchiveError(`${what}: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(backoffMaxMs, delay * 2);
      }
    }
  }

  /** GET `target`, with an idle timeout: the request fails when no byte arrives for `timeoutMs`. */
  async function get(target: string, onBody: (chunk: Uint8Array) => void | Promise<void>): Promise<void> {
    const controller = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
    let timer = setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const touch = () => {
      clearTimeout(timer);
      timer = setTimeout(() => controller.abort(new Error(`no byte for ${timeoutMs} ms`)), timeoutMs);
    };
    try {
      const response = await fetch(target, { signal });
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        throw new Era1ArchiveError(`GET ${target} answered HTTP ${response.status}`, !(response.status >= 400 && response.status < 500 && response.status !== 429));
      }
      if (!response.body) return;
      for await (const chunk of response.body) {
        touch();
        await onBody(chunk as Uint8Array);
      }
    } catch (error) {
      if (error instanceof Era1ArchiveError) throw error;
      const reason = signal.aborted && signal.reason instanceof Error ? signal.reason.message : (error as Error).message;
      throw new Era1ArchiveError(`GET ${target} failed: ${reason}`);
    } finally {
      clearTimeout(timer);
    }
  }

  async function text(target: string): Promise<string> {
    return withRetries(`GET ${target}`, async () => {
      const chunks: Uint8Array[] = [];
      await get(target, (chunk) => { chunks.push(chunk); });
      return Buffer.concat(chunks).toString('utf8');
    });
  }

  function fetchListing() {
    listing ??= (async () => {
      const [page, sums] = await Promise.all([text(base), text(new URL('checksums.txt', base).href)]);
      return { listing: listingOf(page.match(FILE_NAMES_IN_TEXT) ?? []), checksums: parseChecksums(sums) };
    })();
    listing.catch(() => { listing = null; });
    return listing;
  }

  function evict(keep: string): void {
    const cached = [...used.entries()].sort((a, b) => a[1] - b[1]);
    for (const [name] of cached) {
      if (used.size <= cacheFiles) return;
      if (name === keep) continue;
      used.delete(name);
      rmSync(join(cacheDir, name), { force: true });
    }
  }

  async function download(file: Era1Name): Promise<string> {
    const { checksums } = await fetchListing();
    const expected = checksums.byName.get(file.name) ?? checksums.byEpoch.get(file.epoch);
    if (expected === undefined) throw new Era1ArchiveError('checksums.txt has no checksum for it', false, true);
    const target = new URL(file.name, base).href;
    const final = join(cacheDir, file.name);
    const partial = `${final}.part`;
    const started = performance.now();
    try {
      await withRetries(`GET ${target}`, async () => {
        const handle = await open(partial, 'w');
        const hash = createHash('sha256');
        let bytes = 0;
        let reported = performance.now();
        try {
          await get(target, async (chunk) => {
            hash.update(chunk);
            bytes += chunk.length;
            await handle.write(chunk);
            if (performance.now() - reported > 10_000) {
              reported = performance.now();
              options.log?.('info', 'downloading an Era1 file', { file: file.name, bytes });
            }
          });
        } finally {
          await handle.close();
        }
        const actual = hash.digest('hex');
        if (actual !== expected) {
          throw new Era1ArchiveError(`sha256 checksum mismatch: checksums.txt says ${expected}, the download is ${actual}`, false, true);
        }
        options.log?.('info', 'downloaded an Era1 file, checksum verified', { file: file.name, bytes, seconds: Math.round(performance.now() - started) / 1000 });
      });
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    await rename(partial, final);
    used.set(file.name, ++tick);
    evict(file.name);
    return final;
  }

  return {
    location: url,
    async list(refresh = false) {
      if (refresh) listing = null;
      return (await fetchListing()).listing;
    },
    async localPath(file) {
      const cached = join(cacheDir, file.name);
      if (used.has(file.name) && await stat(cached).then(() => true, () => false)) {
        used.set(file.name, ++tick);
        return cached;
      }
      let pending = downloads.get(file.name);
      if (!pending) {
        pending = download(file).finally(() => downloads.delete(file.name));
        downloads.set(file.name, pending);
      }
      return pending;
    },
  };
}
