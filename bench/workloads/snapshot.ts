/**
 * Workload `snapshot`: query-and-follow of a 100k-row collection while blocks keep committing.
 *
 * A real node runs the devnet (a block every 100 ms) with a second blobs processor instance, `bulk`,
 * whose start block lies far ahead, so the lane never applies a block to it but does apply every
 * finality move (rewriting its rows' finality and appending `finalized` changes). Once the node runs,
 * this process writes 100k BlobsBlock rows and their coverage into `p.bulk.*` (LMDB allows a second
 * writer process; the lane's own commits interleave). Each round then, over HTTP:
 *   time to first page   POST …/collections/blocks/query-and-follow {limit} (materializes every row)
 *   pages/s, rows/s      every later page by nextCursor (GET …/entities?cursor=), while blocks commit
 * and releases the snapshot with DELETE.
 */
import { loadavg } from 'node:os';
import { openStore } from '../../store/store.js';
import { readProgress, writeProgress } from '../../store/coverage.js';
import { blockKey } from '../../actors/kinds/blobs/keys.js';
import { renderBlock } from '../../actors/kinds/blobs/render.js';
import type { BlobsBlock } from '../../actors/kinds/blobs/types.js';
import { figure } from '../figures.js';
import { startBenchNode, steadyDevnet, type BenchNode } from '../node.js';
import type { Figure, Workload } from '../workload.js';

const FULL = { rows: 100_000, pageLimit: 1000 };
const SMOKE = { rows: 5_000, pageLimit: 500 };
const SEED_BATCH = 10_000;

function syntheticBlock(number: number): BlobsBlock {
  const hash = (salt: number) => `0x${(number * 7919 + salt).toString(16).padStart(64, '0')}` as const;
  return {
    network: 'bench', blockNumber: number, blockHash: hash(1), parentHash: hash(0), timestamp: 1_700_000_000 + number * 12,
    size: '1234', blobCount: 6, blobGasUsed: '786432', excessBlobGas: '0', blobBaseFee: '1', blobEthBurnedWei: '786432',
    executionBaseFee: '7', gasUsed: '21000', gasLimit: '30000000', executionEthBurnedWei: '147000', reserveFeeWei: '57344',
    transactionCount: 3, targetBlobsPerBlock: 6, maxBlobsPerBlock: 9, transformVersion: 1, finality: 'included',
  };
}

/** Writes the rows, their coverage and the configured start into the `bulk` instance's tables. */
async function seed(node: BenchNode, rows: number): Promise<void> {
  await node.waitFor('the bulk processor tables', async () => {
    const store = openStore({ dataDir: node.dataDir, readOnly: true });
    try {
      return store.processorInstances().includes('bulk');
    } finally {
      await store.close();
    }
  }, 120_000);
  const store = openStore({ dataDir: node.dataDir });
  try {
    const tables = store.processor('bulk');
    for (let from = 0; from < rows; from += SEED_BATCH) {
      await store.write(() => {
        for (let n = from; n < Math.min(rows, from + SEED_BATCH); n += 1) tables.entities.put(blockKey(n), renderBlock(syntheticBlock(n)));
        tables.coverage.put(Buffer.alloc(8), { to: Math.min(rows, from + SEED_BATCH) - 1 });
        if (from === 0) writeProgress(tables.state, { ...readProgress(tables.state), configuredStartBlock: 0 });
      });
    }
  } finally {
    await store.close();
  }
}

interface Round {
  readonly firstPageMs: number;
  readonly pagesPerSecond: number;
  readonly rowsPerSecond: number;
  readonly pages: number;
  readonly rows: number;
  readonly blocksDuring: number;
}

async function head(node: BenchNode): Promise<number> {
  const body = await (await fetch(`${node.baseUrl}/v1/status`)).json() as { head: { number: number } | null };
  return body.head?.number ?? -1;
}

async function round(node: BenchNode, limit: number, expectedRows: number): Promise<Round> {
  const headBefore = await head(node);
  const started = performance.now();
  const response = await fetch(`${node.baseUrl}/v1/processors/bulk/collections/blocks/query-and-follow`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ limit }),
  });
  const text = await response.text();
  const firstPageMs = performance.now() - started;
  if (response.status !== 200) throw new Error(`query-and-follow answered ${response.status}: ${text.slice(0, 300)}`);
  const first = JSON.parse(text) as { data: unknown[]; nextCursor: string | null; snapshotId: string; rowCount: number };
  if (first.rowCount !== expectedRows) throw new Error(`the snapshot holds ${first.rowCount} rows, expected ${expectedRows}`);
  let rows = first.data.length;
  let pages = 0;
  let cursor = first.nextCursor;
  const pagesStarted = performance.now();
  while (cursor !== null) {
    const page = await fetch(`${node.baseUrl}/v1/processors/bulk/collections/blocks/entities?cursor=${cursor}&limit=${limit}`);
    if (page.status !== 200) throw new Error(`page ${pages + 2} answered ${page.status}: ${(await page.text()).slice(0, 300)}`);
    const body = await page.json() as { data: unknown[]; nextCursor: string | null };
    rows += body.data.length;
    pages += 1;
    cursor = body.nextCursor;
  }
  const seconds = (performance.now() - pagesStarted) / 1000;
  if (rows !== expectedRows) throw new Error(`read ${rows} rows across the pages, expected ${expectedRows}`);
  const released = await fetch(`${node.baseUrl}/v1/processors/bulk/query-snapshots/${first.snapshotId}`, { method: 'DELETE' });
  if (released.status !== 204) throw new Error(`DELETE answered ${released.status}`);
  return { firstPageMs, pagesPerSecond: pages / seconds, rowsPerSecond: (rows - first.data.length) / seconds, pages: pages + 1, rows, blocksDuring: (await head(node)) - headBefore };
}

export const snapshotWorkload: Workload = {
  name: 'snapshot',
  description: 'query-and-follow of a 100k-row collection while the devnet commits a block every 100 ms: time to first page, then pages/s by nextCursor',
  async run(options) {
    const shape = options.smoke ? SMOKE : FULL;
    const loadAtStart = loadavg()[0]!;
    const node = await startBenchNode([
      ...steadyDevnet(100),
      'processors=[{id="blobs",kind="blobs"},{id="bulk",kind="blobs",start_block=1000000000000}]',
      `snapshots.max_rows=${Math.max(250_000, shape.rows)}`,
      `limits.max_page_limit=${shape.pageLimit}`,
    ]);
    try {
      await node.waitFor('the devnet running', async () => (await head(node)) >= 3, 120_000);
      await seed(node, shape.rows);
      const rounds: Round[] = [];
      for (let i = 0; i < options.rounds; i += 1) rounds.push(await round(node, shape.pageLimit, shape.rows));
      const of = (name: string, unit: string, value: (r: Round) => number, better?: Figure['better']) => figure(name, unit, rounds.map(value), better);
      return [
        { name: 'machine load average (1 min) at start', unit: 'load', min: loadAtStart, median: loadAtStart, max: loadAtStart },
        of(`rows in the collection`, 'rows', (r) => r.rows),
        of(`time to first page (${shape.pageLimit} rows; materializes all)`, 'ms', (r) => r.firstPageMs, 'lower'),
        of('later pages', 'pages/s', (r) => r.pagesPerSecond, 'higher'),
        of('later pages', 'rows/s', (r) => r.rowsPerSecond, 'higher'),
        of('pages per snapshot', 'pages', (r) => r.pages),
        of('blocks committed during the round', 'blocks', (r) => r.blocksDuring),
      ];
    } finally {
      await node.stop();
    }
  },
};
