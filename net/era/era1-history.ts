/**
 * History from Era1 files (issue 31): blocks by number, each from the file of its epoch (block ÷ 8192), verified
 * before it leaves this module. The first block asked of a file has the whole file's headers, total difficulties
 * and accumulator root verified (era1-verify.ts) against the mainnet epoch roots the node ships; the file stays
 * open and its hashes known for the next requests (the `openFiles` most recently used files), so each later
 * request reads and checks only its blocks' bodies and receipts.
 *
 * Era1 holds the pre-merge chain only (blocks 0 to 15,537,393): a block past it is refused at once, naming the
 * merge, and `range()` says which blocks the archive can serve. At most `concurrency` file reads, verifications
 * and downloads run at once (net/history/slots.ts), whoever asks.
 */
import type { Hash } from '../eth/hex.js';
import { HistoryBlockError, type HeaderLink, type HistoryBlock } from '../history/history-block.js';
import { createSlots } from '../history/slots.js';
import { EPOCH_BLOCKS } from './accumulator.js';
import type { Era1Archive, Era1Listing, Era1Name } from './era1-archive.js';
import { Era1File } from './era1-file.js';
import { readTuples, verifyBlockTuple, verifyEpochHeaders, type VerifiedEpoch } from './era1-verify.js';
import { Era1ArchiveError, Era1BlockError, Era1FormatError } from './errors.js';
import { MAINNET_LAST_PRE_MERGE_BLOCK } from './mainnet-epoch-roots.js';

export type Era1Log = (level: 'info' | 'warn', message: string, fields: Record<string, unknown>) => void;

export interface Era1HistoryOptions {
  readonly archive: Era1Archive;
  /** The epoch roots files must match (mainnet's, mainnet-epoch-roots.ts), epoch 0 first. */
  readonly epochRoots: readonly string[];
  readonly concurrency: number;
  /** Files kept open with their verified hashes (default 4). */
  readonly openFiles?: number;
  readonly log?: Era1Log;
}

/** The blocks an archive can serve: its lowest and highest block, and the epochs missing between them. */
export interface Era1Range {
  readonly earliestBlock: number;
  readonly latestBlock: number;
  readonly files: number;
  readonly missingEpochs: readonly number[];
}

export interface Era1History {
  readonly location: string;
  /** What the archive holds (listed again); null when it holds no mainnet Era1 file. */
  range(): Promise<Era1Range | null>;
  /** Blocks `from`..`to`, ascending, each verified; throws HistoryBlockError (Era1BlockError for a refused file). */
  fetchRange(from: number, to: number): Promise<HistoryBlock[]>;
  /** Headers `from`..`to` (number, hash, parent hash), from verified files. */
  fetchHeaders(from: number, to: number): Promise<HeaderLink[]>;
  /** Block `number`'s link from its verified file: mainnet's canonical block at that height. */
  canonicalLink(number: number): Promise<HeaderLink>;
  /** Closes the open files (a later request opens and verifies its file again). */
  close(): Promise<void>;
}

interface OpenEpoch {
  readonly file: Era1File;
  readonly verified: VerifiedEpoch;
  /** Requests reading the file now (it is closed only when none is). */
  users: number;
  lastUsed: number;
  closed: boolean;
}

export const ERA1_RANGE_REASON = `Era1 files hold the pre-merge chain only: blocks 0 to ${MAINNET_LAST_PRE_MERGE_BLOCK} (the last proof-of-work block)`;

export function createEra1History(options: Era1HistoryOptions): Era1History {
  const { archive, epochRoots } = options;
  const slots = createSlots(options.concurrency);
  const openLimit = Math.max(1, options.openFiles ?? 4);
  const opened = new Map<number, Promise<OpenEpoch>>();
  /** The files of `opened` that are open and verified. */
  const ready = new Map<number, OpenEpoch>();
  let listing: Era1Listing | null = null;
  let tick = 0;

  const pastMerge = (number: number) => new HistoryBlockError(number, `past the merge: ${ERA1_RANGE_REASON}`);

  /** The file of `epoch`: of its candidates, the one named for the shipped root, else the first (refused when read). */
  async function fileOf(epoch: number, asked: number): Promise<Era1Name> {
    listing ??= await listOrFail(asked);
    let candidates = listing.files.get(epoch);
    if (!candidates) {
      // Files may have been added since the listing: look once more before refusing.
      listing = await listOrFail(asked);
      candidates = listing.files.get(epoch);
    }
    if (!candidates || candidates.length === 0) {
      throw new HistoryBlockError(asked, `the Era1 archive ${archive.location} has no file for epoch ${epoch} (blocks ${epoch * EPOCH_BLOCKS}-${Math.min(MAINNET_LAST_PRE_MERGE_BLOCK, (epoch + 1) * EPOCH_BLOCKS - 1)})`);
    }
    const prefix = epochRoots[epoch]?.slice(2, 10);
    return candidates.find((file) => file.rootPrefix === prefix) ?? candidates[0]!;
  }

  async function listOrFail(asked: number): Promise<Era1Listing> {
    try {
      return await archive.list(true);
    } catch (error) {
      if (error instanceof Era1ArchiveError) throw new HistoryBlockError(asked, `cannot list the Era1 archive ${archive.location}: ${error.message}`);
      throw error;
    }
  }

  async function openEpoch(epoch: number, asked: number): Promise<OpenEpoch> {
    const name = await fileOf(epoch, asked);
    let path: string;
    try {
      path = await archive.localPath(name);
    } catch (error) {
      if (error instanceof Era1ArchiveError) {
        if (!error.retryable && error.checksumMismatch) throw new Era1BlockError(name.name, asked, error.message);
        throw new HistoryBlockError(asked, `${name.name}: ${error.message}`);
      }
      throw error;
    }
    let file: Era1File;
    try {
      file = await Era1File.open(path, name.name);
    } catch (error) {
      if (error instanceof Era1FormatError) throw new Era1BlockError(name.name, asked, `not a readable Era1 file: ${error.message}`);
      throw error;
    }
    try {
      if (file.startBlock !== epoch * EPOCH_BLOCKS) throw new Era1BlockError(name.name, asked, `the file's blocks start at ${file.startBlock}, not at epoch ${epoch}'s first block ${epoch * EPOCH_BLOCKS}`);
      const started = performance.now();
      const verified = await verifyEpochHeaders(file, epochRoots, asked);
      if (verified.root.slice(2, 10) !== name.rootPrefix) {
        throw new Era1BlockError(name.name, asked, `the file name says accumulator root ${name.rootPrefix}…, the file's blocks give ${verified.root}`);
      }
      options.log?.('info', 'Era1 file verified: headers linked, total difficulties and the accumulator root match mainnet\'s', {
        file: name.name, blocks: verified.count, fromBlock: verified.startBlock, ms: Math.round(performance.now() - started),
      });
      return { file, verified, users: 0, lastUsed: ++tick, closed: false };
    } catch (error) {
      await file.close();
      throw error;
    }
  }

  /** Runs `use` with epoch `epoch`'s open, verified file (opened and verified on first use). */
  async function withEpoch<T>(epoch: number, asked: number, use: (entry: OpenEpoch) => Promise<T>): Promise<T> {
    let entry: OpenEpoch;
    do {
      let pending = opened.get(epoch);
      if (!pending) {
        const opening = openEpoch(epoch, asked);
        pending = opening;
        opened.set(epoch, opening);
        // A refused file is not kept: the next request reads it again (it may have been replaced).
        opening.catch(() => { if (opened.get(epoch) === opening) opened.delete(epoch); });
      }
      entry = await pending;
    } while (entry.closed); // closed as idle while this request waited: opened again
    ready.set(epoch, entry);
    entry.users += 1;
    entry.lastUsed = ++tick;
    try {
      return await use(entry);
    } finally {
      entry.users -= 1;
      void closeIdle();
    }
  }

  /** Closes the least recently used files past the limit that nobody reads now. */
  async function closeIdle(): Promise<void> {
    if (ready.size <= openLimit) return;
    const idle = [...ready.entries()].filter(([, entry]) => entry.users === 0).sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    for (const [epoch, entry] of idle) {
      if (ready.size <= openLimit) return;
      ready.delete(epoch);
      opened.delete(epoch);
      entry.closed = true;
      await entry.file.close();
    }
  }

  /** Splits [from, to] by epoch and runs `each` on every part, in order. */
  async function byEpoch<T>(from: number, to: number, each: (entry: OpenEpoch, from: number, to: number) => Promise<T[]>): Promise<T[]> {
    if (to > MAINNET_LAST_PRE_MERGE_BLOCK) throw pastMerge(Math.max(from, MAINNET_LAST_PRE_MERGE_BLOCK + 1));
    const out: T[] = [];
    for (let start = from; start <= to;) {
      const epoch = Math.floor(start / EPOCH_BLOCKS);
      const end = Math.min(to, (epoch + 1) * EPOCH_BLOCKS - 1);
      out.push(...await slots.run(() => withEpoch(epoch, start, (entry) => each(entry, start, end))));
      start = end + 1;
    }
    return out;
  }

  return {
    location: archive.location,
    async range() {
      listing = await archive.list(true);
      const epochs = [...listing.files.keys()].filter((epoch) => epoch < epochRoots.length).sort((a, b) => a - b);
      if (epochs.length === 0) return null;
      const first = epochs[0]!;
      const last = epochs.at(-1)!;
      const present = new Set(epochs);
      const missingEpochs: number[] = [];
      for (let epoch = first; epoch <= last; epoch++) if (!present.has(epoch)) missingEpochs.push(epoch);
      return {
        earliestBlock: first * EPOCH_BLOCKS,
        latestBlock: Math.min(MAINNET_LAST_PRE_MERGE_BLOCK, (last + 1) * EPOCH_BLOCKS - 1),
        files: epochs.length,
        missingEpochs,
      };
    },
    fetchRange(from, to) {
      return byEpoch(from, to, async (entry, a, b) => (await readTuples(entry.file, a, b, a)).map((tuple) => verifyBlockTuple(entry.verified, tuple)));
    },
    fetchHeaders(from, to) {
      return byEpoch(from, to, async (entry, a, b) => {
        const links: HeaderLink[] = [];
        for (let n = a; n <= b; n++) links.push(linkOf(entry.verified, n));
        return links;
      });
    },
    async canonicalLink(number) {
      const [link] = await byEpoch(number, number, async (entry, n) => [linkOf(entry.verified, n)]);
      return link!;
    },
    async close() {
      const pending = [...opened.values()];
      opened.clear();
      ready.clear();
      for (const entry of await Promise.allSettled(pending)) {
        if (entry.status !== 'fulfilled' || entry.value.closed) continue;
        entry.value.closed = true;
        await entry.value.file.close();
      }
    },
  };
}

function linkOf(epoch: VerifiedEpoch, number: number): HeaderLink {
  const index = number - epoch.startBlock;
  const hash = epoch.hashes[index];
  if (hash === undefined) throw new HistoryBlockError(number, `${epoch.file} ends at block ${epoch.startBlock + epoch.count - 1}`);
  return { number, hash: hash as Hash, parentHash: epoch.parentHashes[index] as Hash };
}
