/**
 * What the PostgreSQL sink tests share: the node's devnet settings, reading the sink's /metrics, the node's entities
 * and change log, the sink's tables, and a reference fold of a change log (one change at a time, into a Map) that
 * the sink's set-based apply must agree with.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { removeDir, runCli, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { freePort } from '../support/ports.js';
import { startPostgres, type PostgresServer } from '../support/postgres.js';

/** Blocks every 150 ms, a reorg every 8 blocks, finality 4 blocks behind. */
export const FAST = ['devnet.block_time_ms=150', 'devnet.reorg_every=8', 'devnet.reorg_depth=2', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'runtime.shutdown_timeout_seconds=5'];

export const NODE_TOML = ['[[processors]]', 'id = "blobs"', 'kind = "blobs"', '[[processors]]', 'id = "erc20"', 'kind = "erc20"', 'tokens = "*"', ''].join('\n');

export interface Entity { key: string; block: { number: number; hash: string } | null; finality: string | null; data: Record<string, unknown> }
export interface Envelope { sequence: string; cursor: string; operation: string; kind: string; key: string | null; block: { number: number; hash: string } | null; finality: string; data: Record<string, unknown> | null }
export interface TableRow { key: string; data: Record<string, unknown>; block_number: string | null; block_hash: string | null; finality: string | null; change_sequence: string }

/** Polls an async probe until it holds; the bound only catches a hang. */
export async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Starts the node with its API on `port` (kept across restarts, so the sink's node.url stays right); ready once it answers there. */
export async function startNodeOn(port: number, options: { toml: string; sets: readonly string[]; dir?: string }): Promise<NodeProcess> {
  const node = await startNodeProcess({ toml: options.toml, sets: [...options.sets, `listeners.api=127.0.0.1:${port}`], waitReady: false, ...(options.dir ? { dir: options.dir } : {}) });
  await waitUntil(node, async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).status === 200, 120_000).catch(async (error: unknown) => {
    await node.stop('SIGKILL');
    throw error;
  });
  return node;
}

/**
 * Restarts the node on its store (same API port) with no live source and no finality source: its chain, change logs
 * and entities stop moving, so a caught-up sink's tables can be compared with the node's entities at one cursor.
 */
export async function freeze(node: NodeProcess, port: number, toml: string, sets: readonly string[] = FAST): Promise<NodeProcess> {
  assert.equal(await node.stop(), 0);
  const genesis = join(node.dir, 'genesis.json');
  const exported = await runCli(['devnet', 'genesis', '--config', node.configFile, ...sets.flatMap((s) => ['--set', s]), '--out', genesis]);
  assert.equal(exported.code, 0, exported.stderr);
  return startNodeOn(port, { dir: node.dir, toml, sets: [...sets, 'sources.live.kind=none', `sources.live.genesis_file=${genesis}`, 'finality.kind=none'] });
}

/** One sample of a Prometheus text exposition (labels matched as given; absent: undefined). */
export function metric(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.slice(name.length).match(/^\{([^}]*)\}/)?.[1] ?? '';
    const found = Object.fromEntries([...labelText.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

export async function metricsText(url: string): Promise<string> {
  try {
    return await (await fetch(url)).text();
  } catch {
    return '';
  }
}

/** Every entity of a collection, by the entities route's pages. */
export async function entities(baseUrl: string, processor: string, collection: string): Promise<Entity[]> {
  const rows: Entity[] = [];
  let cursor: string | null = null;
  do {
    const url = `${baseUrl}/v1/processors/${processor}/collections/${collection}/entities?limit=1000${cursor ? `&cursor=${cursor}` : ''}`;
    const response = await fetch(url);
    const text = await response.text();
    assert.equal(response.status, 200, text);
    const page = JSON.parse(text) as { data: Entity[]; nextCursor: string | null };
    rows.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return rows;
}

/** The change log of a processor from its earliest retained change through `through` (inclusive). */
export async function changesThrough(baseUrl: string, processor: string, through: bigint): Promise<Envelope[]> {
  const all: Envelope[] = [];
  let after: string | null = null;
  for (;;) {
    const response = await fetch(`${baseUrl}/v1/processors/${processor}/changes?limit=1000${after ? `&after=${after}` : ''}`);
    const text = await response.text();
    assert.equal(response.status, 200, text);
    const page = JSON.parse(text) as { data: Envelope[] };
    for (const change of page.data) {
      if (BigInt(change.sequence) > through) return all;
      all.push(change);
    }
    if (page.data.length === 0) return all;
    after = page.data[page.data.length - 1]!.cursor;
  }
}

export async function headSequence(baseUrl: string, processor: string): Promise<bigint> {
  return BigInt(((await (await fetch(`${baseUrl}/v1/processors/${processor}/changes/head`)).json()) as { sequence: string }).sequence);
}

export async function tableRows(pg: PostgresServer, table: string, schema = 'chain_node'): Promise<Map<string, TableRow>> {
  const rows = await pg.query<TableRow>(`SELECT key, data, block_number::text, block_hash, finality, change_sequence::text FROM "${schema}"."${table}"`);
  return new Map(rows.map((row) => [row.key, row]));
}

/** The stored cursor and the table's rows read in one REPEATABLE READ transaction (a COMMIT landing between two reads cannot split them). */
export async function readAtCursor(pg: PostgresServer, processor: string, table: string, schema = 'chain_node'): Promise<{ sequence: bigint; rows: Map<string, TableRow> }> {
  const client = await pg.client();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    const cursor = await client.query<{ sequence: string }>(`SELECT sequence::text FROM "${schema}".sink_cursors WHERE processor = $1`, [processor]);
    const rows = await client.query<TableRow>(`SELECT key, data, block_number::text, block_hash, finality, change_sequence::text FROM "${schema}"."${table}"`);
    await client.query('COMMIT');
    return { sequence: BigInt(cursor.rows[0]!.sequence), rows: new Map(rows.rows.map((row) => [row.key, row])) };
  } finally {
    await client.end();
  }
}

export async function storedCursor(pg: PostgresServer, processor: string, schema = 'chain_node'): Promise<{ sequence: bigint; cursor: string; bootstraps: number } | null> {
  const rows = await pg.query<{ sequence: string; cursor: string; bootstraps: number }>(`SELECT sequence::text, cursor, bootstraps FROM "${schema}".sink_cursors WHERE processor = $1`, [processor]).catch(() => []);
  const row = rows[0];
  return row ? { sequence: BigInt(row.sequence), cursor: row.cursor, bootstraps: row.bootstraps } : null;
}

/** The rows a table must hold: key → data, block number, block hash and finality. */
export type Expected = Map<string, { data: Record<string, unknown>; blockNumber: number | null; blockHash: string | null; finality: string | null }>;

export function expectedFromEntities(list: readonly Entity[]): Expected {
  return new Map(list.map((e) => [e.key, { data: e.data, blockNumber: e.block?.number ?? null, blockHash: e.block?.hash ?? null, finality: e.finality }]));
}

/**
 * Reference fold of an erc20 change log from its first change: a put sets the row, a delete removes it, a
 * `finalized` change marks the rows of blocks at or below it (as the node derives a row's finality).
 */
export function foldErc20(changes: readonly Envelope[]): Expected {
  const rows: Expected = new Map();
  for (const change of changes) {
    if (change.operation === 'finalized') {
      for (const [key, row] of rows) {
        if (row.blockNumber !== null && row.blockNumber <= change.block!.number && row.finality !== 'finalized') rows.set(key, { ...row, finality: 'finalized', data: { ...row.data, finality: 'finalized' } });
      }
    } else if (change.kind === 'erc20.balance.put') {
      const data = change.data as { lastChange: { blockNumber: number; blockHash: string }; finality: string };
      rows.set(change.key!, { data: change.data!, blockNumber: data.lastChange.blockNumber, blockHash: data.lastChange.blockHash, finality: data.finality });
    } else if (change.kind === 'erc20.balance.delete') {
      rows.delete(change.key!);
    } else {
      throw new Error(`unexpected erc20 change ${change.kind}`);
    }
  }
  return rows;
}

/** Asserts the table holds exactly the expected keys with the same data (JSON equality), block and finality. */
export function assertTableEquals(actual: Map<string, TableRow>, expected: Expected, what: string, options: { blockHash?: boolean; finality?: boolean } = {}): void {
  assert.ok(expected.size > 0, `${what}: the node holds rows to compare`);
  const missing = [...expected.keys()].filter((key) => !actual.has(key));
  const extra = [...actual.keys()].filter((key) => !expected.has(key));
  assert.deepEqual({ missing: missing.slice(0, 5), extra: extra.slice(0, 5) }, { missing: [], extra: [] }, `${what}: the same keys (${missing.length} missing, ${extra.length} extra of ${expected.size})`);
  for (const [key, want] of expected) {
    const row = actual.get(key)!;
    assert.deepStrictEqual(row.data, want.data, `${what}: row ${key} holds the node's value`);
    assert.equal(row.block_number === null ? null : Number(row.block_number), want.blockNumber, `${what}: row ${key} block number`);
    if (options.blockHash !== false) assert.equal(row.block_hash, want.blockHash, `${what}: row ${key} block hash`);
    if (options.finality !== false) assert.equal(row.finality, want.finality, `${what}: row ${key} finality`);
  }
}

/** A throwaway PostgreSQL cluster and a node on a fixed API port, both stopped after the test (the node as it is then). */
export interface SinkEnvironment {
  readonly pg: PostgresServer;
  readonly port: number;
  readonly baseUrl: string;
  /** The running node (replace it after freeze or a restart; the one here at the end is stopped). */
  node: NodeProcess;
}

/** Starts PostgreSQL and the node (`toml`, `sets`), ready once `processor`'s change head reached `minSequence`. */
export async function startSinkEnvironment(t: { after(fn: () => unknown): void }, options: { toml: string; sets: readonly string[]; processor: string; minSequence: bigint }): Promise<SinkEnvironment> {
  const pg = await startPostgres();
  t.after(() => pg.close());
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env: SinkEnvironment = { pg, port, baseUrl, node: await startNodeOn(port, { toml: options.toml, sets: options.sets }) };
  t.after(async () => { await env.node.stop('SIGKILL'); removeDir(env.node.dir); });
  await waitUntil(env.node, async () => (await headSequence(baseUrl, options.processor)) >= options.minSequence, 120_000);
  return env;
}
