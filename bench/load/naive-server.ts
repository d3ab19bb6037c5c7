/**
 * `node naive-server.js --data-dir D`: the query baseline. A plain `node:http` server over the
 * node's LMDB store (opened read-only from this process) that serves the same routes the query
 * workload loads, the usual way: read the stored row, `JSON.parse` it, `JSON.stringify` the reply.
 *
 *   GET /v1/q/blobs/blocks/{n}                        → the BlobsBlock row
 *   GET /v1/q/blobs/blocks?fromBlock&toBlock&limit    → {"data": [rows…], "nextCursor": null}
 *   GET /v1/processors/{p}/collections/{c}/entities?fromBlock&toBlock&limit
 *                                                     → {"data": [entity results…], "nextCursor": null}
 *
 * Entity rows are picked by the collection's own scan (the same rows in the same order as the
 * node's), then each result object is built around the parsed row and the page stringified.
 */
import { createServer, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { BLOBS_COLLECTIONS } from '../../actors/kinds/blobs/collections.js';
import { blockKey } from '../../actors/kinds/blobs/keys.js';
import { openStore } from '../../store/store.js';
import { listenAndAnnounce } from './listening.js';

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, instance: { type: 'string', default: 'blobs' } } });
if (!values['data-dir']) throw new Error('naive-server needs --data-dir');
const store = openStore({ dataDir: values['data-dir'], readOnly: true });
const entities = store.processor(values.instance!).entities;

const ONE_BLOCK = /^\/v1\/q\/blobs\/blocks\/(\d+)$/;
const ENTITY_PAGE = /^\/v1\/processors\/[^/]+\/collections\/([^/]+)\/entities$/;

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

function entityPage(res: ServerResponse, collectionName: string, query: URLSearchParams): void {
  const collection = BLOBS_COLLECTIONS.find((one) => one.name === collectionName);
  if (!collection) return reply(res, 404, { error: 'not_found' });
  const bound = (name: string) => (query.has(name) ? Number(query.get(name)) : null);
  const limit = Number(query.get('limit') ?? 100);
  const data: unknown[] = [];
  for (const row of collection.scan(entities, { fromBlock: bound('fromBlock'), toBlock: bound('toBlock'), after: null, finalizedNumber: null })) {
    if (data.length === limit) break;
    const { meta } = row;
    data.push({
      key: row.key.toString('hex'), collection: collection.name, schema: collection.schema,
      block: meta.blockNumber === null ? null : { number: meta.blockNumber, hash: meta.blockHash },
      timestamp: meta.timestamp, finality: meta.finality, data: JSON.parse(row.value.toString('utf8')),
    });
  }
  reply(res, 200, { data, nextCursor: null });
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const single = ONE_BLOCK.exec(url.pathname);
  if (single) return oneBlock(res, Number(single[1]));
  if (url.pathname === '/v1/q/blobs/blocks') return blockPage(res, url.searchParams);
  const entityCollection = ENTITY_PAGE.exec(url.pathname);
  if (entityCollection) return entityPage(res, entityCollection[1]!, url.searchParams);
  reply(res, 404, { error: 'not_found' });
});
server.keepAliveTimeout = 60_000;
listenAndAnnounce(server, () => store.close());
