/**
 * An HTTP Era1 archive in the community layout, served by a small node:http server in the test: an index page
 * linking the file and `checksums.txt` beside it. The file is downloaded once into the cache directory, its SHA-256
 * checked against checksums.txt, verified and served (and a second reader over the same cache does not download it
 * again); a wrong checksum is refused naming the file and the block asked for, and nothing is kept; an archive
 * without checksums.txt cannot be listed. `checksums.txt` is read in both forms (bare lines by epoch, and
 * `<sha256>  <name>` lines).
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEra1Archive, parseChecksums } from '../../../net/era/era1-archive.js';
import { createEra1History } from '../../../net/era/era1-history.js';
import { Era1BlockError } from '../../../net/era/errors.js';
import { mainnetEpochRoots } from '../../../net/era/mainnet-epoch-roots.js';
import { HistoryBlockError } from '../../../net/history/history-block.js';
import { ERA1_NAME, fixtureBytes, GENESIS_HASH } from './era1-copies.js';

const bytes = fixtureBytes();
const sha256 = createHash('sha256').update(bytes).digest('hex');

interface Archive {
  readonly url: string;
  readonly downloads: () => number;
  close(): Promise<void>;
}

/** Serves the community layout: `/` (an index page), `/checksums.txt` (`checksums`, or 404 when null) and the file. */
async function serveArchive(checksums: string | null): Promise<Archive> {
  let downloads = 0;
  const server: Server = createServer((request, response) => {
    if (request.url === '/') {
      response.writeHead(200, { 'content-type': 'text/html' }).end(
        `<html><body><h1>Index of /</h1><table><tr><td><a href="checksums.txt">checksums.txt</a></td></tr><tr><td><p style="display: none">${ERA1_NAME}</p><a href="${ERA1_NAME}">${ERA1_NAME}</a></td></tr></table></body></html>`,
      );
    } else if (request.url === '/checksums.txt' && checksums !== null) {
      response.writeHead(200, { 'content-type': 'text/plain' }).end(checksums);
    } else if (request.url === `/${ERA1_NAME}`) {
      downloads += 1;
      response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) });
      // In pieces, as a real download arrives.
      for (let at = 0; at < bytes.length; at += 256 * 1024) response.write(bytes.subarray(at, at + 256 * 1024));
      response.end();
    } else {
      response.writeHead(404).end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    downloads: () => downloads,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => { await Promise.all(opened.splice(0).map((history) => history.close())); });

function historyOf(url: string, cacheDir: string) {
  const history = createEra1History({
    archive: createEra1Archive({ url, cacheDir, cacheFiles: 2, timeoutMs: 5000, maxRetries: 1, backoffInitialMs: 10, backoffMaxMs: 50 }),
    epochRoots: mainnetEpochRoots(), concurrency: 2,
  });
  opened.push(history);
  return history;
}

async function withCache<T>(run: (cacheDir: string) => Promise<T>): Promise<T> {
  const cacheDir = mkdtempSync(join(tmpdir(), 'cdn-era1-cache-'));
  try {
    return await run(cacheDir);
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
}

test('an HTTP archive (index page + checksums.txt) is listed, its file downloaded once, checksum-checked, verified and served', async () => {
  const archive = await serveArchive(`0x${sha256}\n`);
  try {
    await withCache(async (cacheDir) => {
      const history = historyOf(archive.url, cacheDir);
      assert.deepEqual(await history.range(), { earliestBlock: 0, latestBlock: 8191, files: 1, missingEpochs: [] });
      const [genesis] = await history.fetchRange(0, 0);
      assert.equal(genesis!.hash, GENESIS_HASH);
      assert.equal((await history.fetchRange(8000, 8191)).length, 192);
      assert.equal(archive.downloads(), 1);
      assert.deepEqual(readdirSync(cacheDir), [ERA1_NAME], 'the verified download is kept under its own name');
      // Another reader over the same cache (a restart) takes the kept file.
      assert.equal((await historyOf(archive.url, cacheDir).fetchRange(5, 5))[0]!.number, 5);
      assert.equal(archive.downloads(), 1);
    });
  } finally {
    await archive.close();
  }
});

test('a download whose SHA-256 is not the one checksums.txt lists is refused naming the file and the block, and nothing is kept', async () => {
  const wrong = sha256.replace(/^./, (c) => (c === '0' ? '1' : '0'));
  const archive = await serveArchive(`${wrong}  ${ERA1_NAME}\n`);
  try {
    await withCache(async (cacheDir) => {
      await assert.rejects(historyOf(archive.url, cacheDir).fetchRange(5, 9), (error: unknown) => {
        assert.ok(error instanceof Era1BlockError, String(error));
        assert.equal(error.message, `${ERA1_NAME}: block 5: sha256 checksum mismatch: checksums.txt says ${wrong}, the download is ${sha256}`);
        return true;
      });
      assert.equal(archive.downloads(), 1, 'a checksum mismatch is not retried');
      assert.deepEqual(readdirSync(cacheDir), [], 'neither the file nor a partial download is kept');
    });
  } finally {
    await archive.close();
  }
});

test('an archive without checksums.txt cannot be listed, and a block asked of it says why', async () => {
  const archive = await serveArchive(null);
  try {
    await withCache(async (cacheDir) => {
      await assert.rejects(historyOf(archive.url, cacheDir).fetchRange(1, 1), (error: unknown) => {
        assert.ok(error instanceof HistoryBlockError);
        assert.match(error.message, /^block 1: cannot list the Era1 archive http:\/\/127\.0\.0\.1:\d+\/: GET http:\/\/127\.0\.0\.1:\d+\/checksums\.txt answered HTTP 404$/);
        return true;
      });
      assert.equal(archive.downloads(), 0);
    });
  } finally {
    await archive.close();
  }
});

test('checksums.txt: bare lines count by epoch, `<sha256>  <name>` lines by name, 0x optional', () => {
  const a = 'ab'.repeat(32);
  const b = 'cd'.repeat(32);
  const parsed = parseChecksums(`0x${a}\n\n${b}  *mainnet-00001-a5364e9a.era1\n`);
  assert.deepEqual([...parsed.byEpoch], [[0, a]]);
  assert.deepEqual([...parsed.byName], [['mainnet-00001-a5364e9a.era1', b]]);
  assert.throws(() => parseChecksums('not-a-digest\n'), /does not start with a SHA-256 in hex/);
});
