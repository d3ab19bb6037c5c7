/**
 * Workload `sink` (issue 32's Measure): `chain-node sink postgres` — the real process — against a real PostgreSQL
 * (a throwaway cluster with the server's durable defaults: fsync and synchronous commit on) and a synthetic erc20
 * feed shaped as the node's (bench/load/erc20-feed-server.ts: mainnet-shaped balances, ~250 balance changes a block).
 * Per round, in a fresh schema:
 *
 *   - **bootstrap**: a snapshot of `rows` balances (1,000,000 in a full run) copied in, indexed and swapped in:
 *     rows/s from the sink's start to its cursor row (the whole bootstrap), and the COPY phase alone (its log);
 *   - **follow**: `blocks` blocks appended at once, twice: shaped as a node's erc20 backfill emits them (finalized
 *     changes) and as a node following the head emits them (included changes, each block adding a `finalized` change
 *     64 blocks behind, which makes the rows of that block final: a second write of each row); changes applied per
 *     second from the append to the cursor reaching the head — against a **naive sink** in the same round: the same
 *     feed, tables and batches, one statement per change (INSERT … ON CONFLICT, DELETE, or the UPDATE of the rows a
 *     `finalized` change makes final), in one transaction per batch, and — the naive sink that is still exactly once —
 *     in one transaction per change with its cursor (over the first 5,000 changes of the burst);
 *   - **latency**: one block a second; from a change's `emittedAt` (the moment the feed made it readable) to its
 *     row visible to another PostgreSQL session (the cursor row, committed with the rows, polled every 2 ms).
 *
 * Batches are `CDN_BENCH_SINK_BATCH` changes (default 1000, the node's default `limits.max_page_limit`), snapshot
 * pages `CDN_BENCH_SINK_PAGE` rows (default 1000).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createTableStatement, indexStatements } from '../../actors/sink/tables.js';
import { ERC20_MAPPING } from '../../actors/sink/mappings/erc20.js';
import { compared, figure } from '../figures.js';
import { trackChild, trackDirectory } from '../leftovers.js';
import { startErc20Feed, type Erc20Feed } from '../load/erc20-feed-server.js';
import { startPostgres, type PostgresServer } from '../postgres.js';
import { percentile } from '../stats.js';
import type { Figure, Workload } from '../workload.js';

const FULL = { rows: 1_000_000, blocks: 200, latencyBlocks: 60 };
const SMOKE = { rows: 3000, blocks: 4, latencyBlocks: 2 };
const BATCH = Number(process.env.CDN_BENCH_SINK_BATCH ?? 1000);
const PAGE = Number(process.env.CDN_BENCH_SINK_PAGE ?? 1000);
const CLI = fileURLToPath(new URL('../../cli.js', import.meta.url));
const CREDENTIAL = 'bench-sink-consumer-credential';

interface SinkRun {
  readonly output: string[];
  stop(): Promise<void>;
}

function startSink(dir: string, feed: Erc20Feed, postgres: PostgresServer, schema: string, consumer: string): SinkRun {
  const config = join(dir, `${schema}.toml`);
  writeFileSync(config, [
    '[log]', 'level = "warn"',
    '[node]', `url = "${feed.baseUrl}"`,
    '[consumer]', `id = "${consumer}"`, `batch_changes = ${BATCH}`, 'idle_poll_ms = 20',
    '[postgres]', `url = "${postgres.url}"`, `schema = "${schema}"`,
    '[sink]', `bootstrap_page_rows = ${PAGE}`, 'progress_interval_ms = 600000',
    '[metrics]', 'listen = ""',
    '[[processors]]', 'id = "erc20"', '',
  ].join('\n'));
  const child = trackChild(spawn(process.execPath, [CLI, 'sink', 'postgres', '--config', config, '--set', 'log.level=info'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CHAIN_NODE_SINK_CONSUMER_CREDENTIAL: CREDENTIAL } }));
  const output: string[] = [];
  const collect = (chunk: Buffer) => output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return {
    output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

async function cursorOf(client: pg.Client, schema: string): Promise<number | null> {
  const result = await client.query<{ sequence: string }>(`SELECT sequence::text FROM "${schema}".sink_cursors WHERE processor = 'erc20'`).catch(() => ({ rows: [] as Array<{ sequence: string }> }));
  return result.rows[0] ? Number(result.rows[0].sequence) : null;
}

/**
 * Polls the sink's cursor row until `target` holds: every `everyMs` (2 ms for the latency; throughput phases poll
 * every 20 ms, so the bench's own queries take little of the two cores from the sink and PostgreSQL).
 */
async function waitCursor(client: pg.Client, schema: string, target: (sequence: number | null) => boolean, sink: SinkRun, everyMs: number, timeoutMs = 1_800_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!target(await cursorOf(client, schema))) {
    if (Date.now() > deadline) throw new Error(`sink bench: the cursor of ${schema} did not move in time:\n${sink.output.slice(-20).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * The naive sink: the same batches, one statement per change; `batch`: one transaction per batch (with the cursor),
 * `change`: one transaction per change (the statement and the cursor: exactly once, change by change), over the first
 * `most` changes only (its rate is steady, and a whole burst would take minutes).
 */
async function naiveFollow(client: pg.Client, feed: Erc20Feed, schema: string, from: number, to: number, finalizedBlock: number, transaction: 'batch' | 'change', most = Infinity): Promise<number> {
  to = Math.min(to, from + most);
  const base = `${feed.baseUrl}/v1/processors/erc20/consumers`;
  const headers = { 'content-type': 'application/json', 'x-node-consumer-credential': CREDENTIAL };
  await fetch(base, { method: 'POST', headers, body: JSON.stringify({ id: `naive-${schema}`, role: 'required', start: { position: 'cursor', cursor: `c${from}` }, leaseTtlSeconds: 300, credential: CREDENTIAL }) });
  const table = `"${schema}"."erc20_balances"`;
  const started = performance.now();
  let applied = from;
  while (applied < to) {
    const page = await (await fetch(`${base}/naive-${schema}/changes?limit=${BATCH}`, { headers })).json() as { data: Array<{ sequence: string; cursor: string; operation: string; kind: string; key: string; block: { number: number; hash: string }; data: { lastChange: { blockNumber: number; blockHash: string }; finality: string } | null }> };
    if (transaction === 'batch') await client.query('BEGIN');
    for (const change of page.data) {
      if (Number(change.sequence) > to) break;
      if (transaction === 'change') await client.query('BEGIN');
      if (change.operation === 'finalized') {
        // The rows above the last finalized block, as the sink does (the same index range).
        await client.query(`UPDATE ${table} SET finality = 'finalized', data = jsonb_set(data, '{finality}', '"finalized"') WHERE block_number > $1 AND block_number <= $2 AND finality IS DISTINCT FROM 'finalized'`, [finalizedBlock, change.block.number]);
        finalizedBlock = Math.max(finalizedBlock, change.block.number);
      } else if (change.kind === 'erc20.balance.delete') {
        await client.query(`DELETE FROM ${table} WHERE key = $1`, [change.key]);
      } else {
        await client.query(`INSERT INTO ${table} (key, data, block_number, block_hash, finality, change_sequence) VALUES ($1, $2, $3, $4, $5, $6)
          ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data, block_number = EXCLUDED.block_number, block_hash = EXCLUDED.block_hash, finality = EXCLUDED.finality, change_sequence = EXCLUDED.change_sequence`,
        [change.key, JSON.stringify(change.data), change.data!.lastChange.blockNumber, change.data!.lastChange.blockHash, change.data!.finality, change.sequence]);
      }
      if (transaction === 'change') {
        await client.query(`UPDATE "${schema}".naive_cursor SET sequence = $1`, [change.sequence]);
        await client.query('COMMIT');
      }
      applied = Number(change.sequence);
    }
    if (transaction === 'batch') {
      await client.query(`UPDATE "${schema}".naive_cursor SET sequence = $1`, [applied]);
      await client.query('COMMIT');
    }
    await fetch(`${base}/naive-${schema}/ack`, { method: 'POST', headers, body: JSON.stringify({ cursor: page.data[page.data.length - 1]!.cursor }) });
  }
  return (to - from) / ((performance.now() - started) / 1000);
}

/** The naive sink's tables: a copy of the sink's (same rows, keys, indexes and typed columns). */
async function copyTables(client: pg.Client, from: string, to: string): Promise<void> {
  await client.query(`CREATE SCHEMA "${to}"`);
  await client.query(createTableStatement(to, 'erc20_balances', ERC20_MAPPING.collections[0]!));
  await client.query(`INSERT INTO "${to}".erc20_balances (key, data, block_number, block_hash, finality, change_sequence) SELECT key, data, block_number, block_hash, finality, change_sequence FROM "${from}".erc20_balances`);
  for (const statement of indexStatements(to, 'erc20_balances', ERC20_MAPPING.collections[0]!)) await client.query(statement);
  await client.query(`CREATE TABLE "${to}".naive_cursor (sequence bigint NOT NULL); INSERT INTO "${to}".naive_cursor VALUES (0)`);
  await client.query(`VACUUM ANALYZE "${to}".erc20_balances`);
}

interface Burst { readonly changesPerSecond: number; readonly naiveChangesPerSecond: number; readonly naivePerChangePerSecond: number }

/** Changes the transaction-per-change naive sink applies of each burst. */
const NAIVE_PER_CHANGE_MOST = 5000;

interface RoundFigures {
  readonly bootstrapRowsPerSecond: number;
  readonly copyRowsPerSecond: number;
  readonly backfill: Burst;
  readonly live: Burst;
  readonly latencyMs: number[];
}

/** `blocks` blocks appended at once, followed by the sink, then by the naive sink over a copy of the tables as they were. */
async function burst(client: pg.Client, feed: Erc20Feed, schema: string, sink: SinkRun, blocks: number, shape: 'live' | 'backfill'): Promise<Burst> {
  const from = feed.head();
  const naiveSchema = `${schema}_naive_${shape}`;
  const state = await client.query<{ block: number | null }>(`SELECT (collections->'balances'->>'finalizedBlock')::bigint AS block FROM "${schema}".sink_cursors WHERE processor = 'erc20'`);
  await copyTables(client, schema, naiveSchema);
  // Each side starts with no dirty pages of the copy to write back.
  await client.query('CHECKPOINT');
  const to = feed.appendBlocks(blocks, shape);
  const started = performance.now();
  await waitCursor(client, schema, (sequence) => sequence === to, sink, 20);
  const changesPerSecond = (to - from) / ((performance.now() - started) / 1000);
  const finalizedBlock = Number(state.rows[0]?.block ?? -1);
  await client.query('CHECKPOINT');
  const naiveChangesPerSecond = await naiveFollow(client, feed, naiveSchema, from, to, finalizedBlock, 'batch');
  await client.query(`DROP SCHEMA "${naiveSchema}" CASCADE`);
  await copyTables(client, schema, naiveSchema);
  await client.query('CHECKPOINT');
  const naivePerChangePerSecond = await naiveFollow(client, feed, naiveSchema, from, to, finalizedBlock, 'change', NAIVE_PER_CHANGE_MOST);
  await client.query(`DROP SCHEMA "${naiveSchema}" CASCADE`);
  return { changesPerSecond, naiveChangesPerSecond, naivePerChangePerSecond };
}

async function round(index: number, shape: typeof FULL, postgres: PostgresServer, dir: string): Promise<RoundFigures> {
  const feed = await startErc20Feed({ rows: shape.rows });
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  const schema = `bench_sink_${index}`;
  const sink = startSink(dir, feed, postgres, schema, `sink-${index}`);
  try {
    const started = performance.now();
    await waitCursor(client, schema, (sequence) => sequence !== null, sink, 20);
    const bootstrapRowsPerSecond = shape.rows / ((performance.now() - started) / 1000);
    const copied = sink.output.map((line) => JSON.parse(line) as { message?: string; rowsPerSecond?: number }).find((line) => line.message === 'bootstrap copied');
    const copyRowsPerSecond = copied?.rowsPerSecond ?? NaN;
    await client.query(`VACUUM ANALYZE "${schema}".erc20_balances`);

    // Follow: a burst of blocks at once, as a node's erc20 backfill emits them (finalized), then as a node following
    // the head (included, each block finalizing the one 64 behind).
    const backfill = await burst(client, feed, schema, sink, shape.blocks, 'backfill');
    const live = await burst(client, feed, schema, sink, shape.blocks, 'live');

    // Latency: one block a second.
    const latencyMs: number[] = [];
    for (let block = 0; block < shape.latencyBlocks; block += 1) {
      const blockStart = Date.now();
      const emitted = Date.now();
      const head = feed.appendBlocks(1);
      await waitCursor(client, schema, (sequence) => sequence === head, sink, 2, 60_000);
      latencyMs.push(Date.now() - emitted);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (Date.now() - blockStart))));
    }
    return { bootstrapRowsPerSecond, copyRowsPerSecond, backfill, live, latencyMs };
  } finally {
    await sink.stop();
    await client.end();
    await feed.close();
  }
}

export const sinkWorkload: Workload = {
  name: 'sink',
  description: 'chain-node sink postgres (real process, real PostgreSQL with fsync on) over a synthetic mainnet-shaped erc20 feed: bootstrap rows/s, changes applied/s against a one-statement-per-change sink, commit-to-visible latency at 1 block/s',
  async run(options): Promise<Figure[]> {
    const shape = options.smoke ? SMOKE : FULL;
    const dir = mkdtempSync(join(tmpdir(), 'cdn-bench-sink-'));
    const removeDir = trackDirectory(dir);
    const postgres = await startPostgres({ settings: { fsync: 'on', full_page_writes: 'on', synchronous_commit: 'on', shared_buffers: '256MB', max_wal_size: '4GB' } });
    try {
      const rounds: RoundFigures[] = [];
      for (let i = 0; i < options.rounds; i += 1) rounds.push(await round(i, shape, postgres, dir));
      const latency = rounds.flatMap((r) => r.latencyMs).sort((a, b) => a - b);
      return [
        figure(`bootstrap rows/s (${shape.rows.toLocaleString('en-US')} balances: start to cursor, COPY + indexes + swap)`, 'rows/s', rounds.map((r) => r.bootstrapRowsPerSecond), 'higher'),
        figure('bootstrap COPY rows/s (the copy phase alone)', 'rows/s', rounds.map((r) => r.copyRowsPerSecond), 'higher'),
        compared(`changes applied/s, erc20 backfill (${shape.blocks} blocks of ~250 finalized changes at once, batches of ${BATCH})`, 'changes/s', rounds.map((r) => r.backfill.changesPerSecond), { name: 'naive: one statement per change, a transaction per batch', values: rounds.map((r) => r.backfill.naiveChangesPerSecond) }, 'higher'),
        compared('changes applied/s, erc20 backfill, against a transaction per change', 'changes/s', rounds.map((r) => r.backfill.changesPerSecond), { name: `naive: one statement and the cursor per change, each its own transaction (first ${NAIVE_PER_CHANGE_MOST} changes)`, values: rounds.map((r) => r.backfill.naivePerChangePerSecond) }, 'higher'),
        compared(`changes applied/s, live-shaped (${shape.blocks} blocks of ~250 included changes and a finalized change 64 blocks behind, at once)`, 'changes/s', rounds.map((r) => r.live.changesPerSecond), { name: 'naive: one statement per change, a transaction per batch', values: rounds.map((r) => r.live.naiveChangesPerSecond) }, 'higher'),
        compared('changes applied/s, live-shaped, against a transaction per change', 'changes/s', rounds.map((r) => r.live.changesPerSecond), { name: `naive: one statement and the cursor per change, each its own transaction (first ${NAIVE_PER_CHANGE_MOST} changes)`, values: rounds.map((r) => r.live.naivePerChangePerSecond) }, 'higher'),
        figure('commit → row visible p50 (1 block/s)', 'ms', [percentile(latency, 50)], 'lower'),
        figure('commit → row visible p99 (1 block/s)', 'ms', [percentile(latency, 99)], 'lower'),
      ];
    } finally {
      await postgres.close();
      removeDir();
    }
  },
};
