/**
 * `node naive-server.js --data-dir D`: the query baseline. A plain `node:http` server over the
 * node's LMDB store (opened read-only from this process) that serves the same two blob routes the
 * query workload loads, the usual way: read the stored row, `JSON.parse` it, `JSON.stringify` the
 * reply.
 *
 *   GET /v1/q/blobs/blocks/{n}                        → the BlobsBlock row
 *   GET /v1/q/blobs/blocks?fromBlock&toBlock&limit    → {"data": [rows…], "nextCursor": null}
 */
import { createServer, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { blockKey } from '../../actors/processors/blobs/keys.js';
import { openStore } from '../../store/env.js';
import { listenAndAnnounce } from './listening.js';

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, instance: { type: 'string', default: 'blobs' } } });
if (!values['data-dir']) throw new Error('naive-server needs --data-dir');
const store = openStore({ dataDir: values['data-dir'], readOnly: true });
const entities = store.processor(values.instance!).entities;

const ONE_BLOCK = /^\/v1\/q\/blobs\/blocks\/(\d+)$/;

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function oneBlock(res: ServerResponse, blockNumber: number): void {
  const row = entities.get(blockKey(blockNumber));
  if (!row) return reply(res, 404, { error: 'not_found' });
  reply(res, 200, JSON.parse(row.toString('utf8')));
}

function blockPage(res: ServerResponse, query: URLSearchParams): void {
  const fromBlock = Number(query.get('fromBlock') ?? 0);
  const toBlock = Number(query.get('toBlock') ?? fromBlock);
  const limit = Number(query.get('limit') ?? 100);
  const end = Buffer.concat([blockKey(toBlock), Buffer.of(0)]);
  const data: unknown[] = [];
  for (const { value } of entities.getRange({ start: blockKey(fromBlock), end, limit })) data.push(JSON.parse(value.toString('utf8')));
  reply(res, 200, { data, nextCursor: null });
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const single = ONE_BLOCK.exec(url.pathname);
  if (single) return oneBlock(res, Number(single[1]));
  if (url.pathname === '/v1/q/blobs/blocks') return blockPage(res, url.searchParams);
  reply(res, 404, { error: 'not_found' });
});
server.keepAliveTimeout = 60_000;
listenAndAnnounce(server, () => store.close());
