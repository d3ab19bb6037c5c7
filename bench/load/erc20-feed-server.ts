/**
 * A synthetic erc20 feed for the sink bench (bench/workloads/sink.ts): an HTTP server on loopback answering the
 * routes `chain-node sink postgres` uses — processor status, a query-and-follow snapshot of `rows` balances, the
 * change head and one durable consumer per id — with bodies shaped byte for byte as the node renders them
 * (entity results, change envelopes of erc20.v1). Rows and changes are mainnet-shaped: 64 tokens, holders skewed
 * towards a few hot ones, balances up to 30 digits. Blocks are appended by the bench (`appendBlocks`), each ~250
 * balance changes (a few of them deletes) and a `finalized` change 64 blocks behind; each change's `emittedAt` is the
 * moment it became readable, so the sink's commit-to-visible latency starts there.
 *
 * It stands in for a node so the sink's own cost is measured: a node's erc20 lane commits ~250 changes a block
 * at mainnet density far below the rates measured here, and its consumer routes are the consumer workload's.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generator } from '../workloads/erc20.js';

const TOKENS = 64;
const CHANGES_PER_BLOCK = 250;
const FINALITY_LAG = 64;


const hex = (value: number, width: number) => value.toString(16).padStart(width, '0');
const token = (index: number) => `0x${hex(0xe2c20000 + index, 8)}${'0'.repeat(32)}`;
const holder = (index: number) => `0x${hex(index, 40)}`;
const blockHash = (number: number, fork: number) => `0x${hex(fork, 8)}${hex(number, 56)}`;

interface Consumer { acked: number; delivered: number; exists: boolean }

export interface Erc20Feed {
  readonly baseUrl: string;
  /** The snapshot's size (balances at the boundary). */
  readonly rows: number;
  /** The last change's sequence. */
  head(): number;
  /**
   * Appends `count` blocks of changes, readable at once; returns the new head. `live` (the default): the changes
   * are `included` and each block adds a `finalized` change 64 blocks behind, as a node following the head emits;
   * `backfill`: the changes are `finalized` and no `finalized` change follows, as a node's history backfill emits
   * (actors/processor/history-apply.ts).
   */
  appendBlocks(count: number, shape?: 'live' | 'backfill'): number;
  /** Consumer changes served (for the bench's own check). */
  served(): number;
  close(): Promise<void>;
}

/** The balance row JSON of holder `h` of token `t` at `block` (field order of the node's rowJson). */
function rowJson(t: number, h: number, balance: string, block: number, finality: string): string {
  return `{"token":"${token(t)}","address":"${holder(h)}","balance":"${balance}","lastChange":{"blockNumber":${block},"blockHash":"${blockHash(block, 0)}","timestamp":${1_700_000_000 + block * 12}},"finality":"${finality}"}`;
}

const keyOf = (t: number, h: number) => `01${token(t).slice(2)}${holder(h).slice(2)}`;

export async function startErc20Feed(options: { rows: number; snapshotBlock?: number }): Promise<Erc20Feed> {
  const snapshotBlock = options.snapshotBlock ?? 20_000_000;
  const random = generator(0x5eed);
  const balanceOf = (i: number) => `${1 + (i * 7919) % 1_000_000}${hex(i, 12).replace(/[a-f]/g, '7')}${'0'.repeat(i % 13)}`;
  // Snapshot row i: token i % 64, holder ⌊i / 64⌋ — distinct keys, every token populated.
  const entity = (i: number) => {
    const t = i % TOKENS;
    const h = Math.floor(i / TOKENS);
    // Each balance's last change: 250 a block going back from the snapshot's block (as many as a block writes).
    const block = snapshotBlock - Math.floor(i / CHANGES_PER_BLOCK);
    const finality = block <= snapshotBlock - FINALITY_LAG ? 'finalized' : 'included';
    return `{"key":"${keyOf(t, h)}","collection":"balances","schema":"erc20.v1/Erc20Balance","block":{"number":${block},"hash":"${blockHash(block, 0)}"},"timestamp":${1_700_000_000 + block * 12},"finality":"${finality}","data":${rowJson(t, h, balanceOf(i), block, finality)}}`;
  };
  const boundary = 1;
  const log: string[] = ['']; // log[s] is change s; change 1 is the snapshot boundary itself
  log.push('');
  let block = snapshotBlock;
  let served = 0;
  const holders = Math.max(1, Math.floor(options.rows / TOKENS));
  const consumers = new Map<string, Consumer>();

  const envelope = (sequence: number, operation: string, kind: string, key: string | null, data: string, number: number, emittedAt: string, finality: string) =>
    `{"apiVersion":"1","sequence":"${sequence}","cursor":"c${sequence}","operation":"${operation}","originKind":"${finality === 'included' ? 'live' : 'history'}","originId":"bench","publicationRevision":"1","chainId":1,`
    + `"block":{"number":${number},"hash":"${blockHash(number, 0)}","parentHash":"${blockHash(number - 1, 0)}","timestamp":${1_700_000_000 + number * 12}},"finality":"${finality}","kind":"${kind}","schema":"erc20.v1","key":${key === null ? 'null' : `"${key}"`},"data":${data},"emittedAt":"${emittedAt}"}`;

  const appendBlock = (shape: 'live' | 'backfill') => {
    const finality = shape === 'live' ? 'included' : 'finalized';
    block += 1;
    const emittedAt = new Date().toISOString();
    const touched = new Set<string>();
    while (touched.size < CHANGES_PER_BLOCK) {
      // Skewed: most changes touch a few hot tokens and holders, as on mainnet.
      const t = Math.min(TOKENS - 1, Math.floor(TOKENS * random() ** 3));
      const h = Math.min(holders * 2, Math.floor(holders * 2 * random() ** 2));
      const key = keyOf(t, h);
      if (touched.has(key)) continue;
      touched.add(key);
      const sequence = log.length;
      if (random() < 0.04) {
        log.push(envelope(sequence, 'apply', 'erc20.balance.delete', key, `{"token":"${token(t)}","address":"${holder(h)}","lastChange":{"blockNumber":${block},"blockHash":"${blockHash(block, 0)}","timestamp":${1_700_000_000 + block * 12}}}`, block, emittedAt, finality));
      } else {
        const balance = `${Math.floor(random() * 1e15)}${Math.floor(random() * 1e15)}`;
        log.push(envelope(sequence, 'apply', 'erc20.balance.put', key, rowJson(t, h, balance, block, finality), block, emittedAt, finality));
      }
    }
    if (shape === 'live') log.push(envelope(log.length, 'finalized', 'erc20.block.finalized', null, 'null', block - FINALITY_LAG, emittedAt, 'finalized'));
  };

  const view = (id: string, c: Consumer) => JSON.stringify({
    id, processor: 'erc20', instance: 'erc20', role: 'required', leaseTtlSeconds: 300, lease: { expiresAt: new Date(Date.now() + 300_000).toISOString(), active: true },
    start: { position: 'cursor', sequence: String(boundary) }, delivered: { sequence: String(c.delivered), cursor: `c${c.delivered}` },
    acknowledged: { sequence: String(c.acked), cursor: `c${c.acked}` }, createdAt: new Date().toISOString(),
  });
  const error = (status: number, code: string, message: string) => JSON.stringify({ error: { code, message, retryable: false, requestId: 'bench' } });

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://feed');
      const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> : {};
      const reply = (status: number, text: string) => response.writeHead(status, { 'content-type': 'application/json' }).end(text);
      const path = url.pathname;
      const consumerMatch = /^\/v1\/processors\/erc20\/consumers(?:\/([^/]+))?(?:\/(lease|changes|ack))?$/.exec(path);
      if (path === '/v1/processors/erc20/status') {
        return reply(200, JSON.stringify({ processor: { id: 'erc20', instance: 'erc20', kind: 'erc20', version: '1.0.0', changeSchema: 'erc20.v1', output: 'entities', delivery: true } }));
      }
      if (path === '/v1/processors/erc20/changes/head') return reply(200, JSON.stringify({ sequence: String(log.length - 1), cursor: `c${log.length - 1}` }));
      if (path === '/v1/processors/erc20/collections/balances/query-and-follow' && request.method === 'POST') {
        const limit = Number(body.limit ?? 100);
        const offset = typeof body.cursor === 'string' ? Number(body.cursor.slice(1)) : 0;
        const end = Math.min(options.rows, offset + limit);
        const rows: string[] = [];
        for (let i = offset; i < end; i += 1) rows.push(entity(i));
        const next = end < options.rows ? `"o${end}"` : 'null';
        return reply(200, `{"data":[${rows.join(',')}],"nextCursor":${next},"snapshotId":"benchsnapshot0001","changeBoundary":{"sequence":"${boundary}"},"boundaryCursor":"c${boundary}","recovery":{"action":"follow"},"rowCount":${options.rows}}`);
      }
      if (path.startsWith('/v1/processors/erc20/query-snapshots/')) return response.writeHead(204).end();
      if (consumerMatch) {
        const [, id, action] = consumerMatch;
        if (!id && request.method === 'POST') {
          const start = Number(String((body.start as { cursor?: string }).cursor ?? 'c1').slice(1));
          const consumer = { acked: start, delivered: start, exists: true };
          consumers.set(String(body.id), consumer);
          return reply(201, view(String(body.id), consumer));
        }
        const consumer = consumers.get(id ?? '');
        if (!consumer?.exists) return reply(404, error(404, 'not_found', 'no such consumer'));
        if (!action && request.method === 'DELETE') {
          consumer.exists = false;
          return response.writeHead(204).end();
        }
        if (action === 'lease') {
          if (body.redeliver === true) consumer.delivered = consumer.acked;
          return reply(200, view(id!, consumer));
        }
        if (action === 'ack') {
          consumer.acked = Math.max(consumer.acked, Number(String(body.cursor).slice(1)));
          return reply(200, view(id!, consumer));
        }
        if (action === 'changes') {
          const limit = Number(url.searchParams.get('limit') ?? 100);
          const from = consumer.delivered + 1;
          const to = Math.min(log.length - 1, consumer.delivered + limit);
          consumer.delivered = Math.max(consumer.delivered, to);
          served += Math.max(0, to - from + 1);
          return reply(200, `{"data":[${log.slice(from, to + 1).join(',')}],"nextCursor":null,"coverage":{},"consumer":${view(id!, consumer)}}`);
        }
      }
      reply(404, error(404, 'not_found', `the bench feed does not serve ${request.method} ${path}`));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    rows: options.rows,
    head: () => log.length - 1,
    appendBlocks(count, shape = 'live') {
      for (let i = 0; i < count; i += 1) appendBlock(shape);
      return log.length - 1;
    },
    served: () => served,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
