/**
 * `node naive-rpc-server.js --data-dir D --chain-id N`: the JSON-RPC baseline. A plain `node:http`
 * server over the node's LMDB store (read-only, from this process) answering `eth_getBlockByNumber`
 * and `eth_getBlockReceipts` the usual way: `JSON.parse` the request, read and decode the block from
 * LMDB, build the result object, `JSON.stringify` the reply — per request. Senders are recovered once
 * per block and kept (recovering them per request would make the baseline a strawman).
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { BlockView } from '../../api/rpc/block-view.js';
import { renderBlock } from '../../api/rpc/render-block.js';
import { blockReceipts } from '../../api/rpc/render-receipt.js';
import { getBlockNumber, getBodyBytes, getCanonicalHash, getHeaderBytes, getReceiptsBytes } from '../../store/chain-material.js';
import { openStore } from '../../store/store.js';
import { bytesToHex, type Address } from '../../net/eth/hex.js';
import { devnetForkSchedule, resolveDevnetConfig } from '../../net/devnet/index.js';
import { listenAndAnnounce } from './listening.js';

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' } } });
if (!values['data-dir']) throw new Error('naive-rpc-server needs --data-dir');
const store = openStore({ dataDir: values['data-dir'], readOnly: true });
/** Receipts' blob prices need the fork schedule: the bench node runs the default devnet's. */
const schedule = devnetForkSchedule(resolveDevnetConfig({}));
const senders = new Map<string, Address[]>();

function view(number: number): BlockView | undefined {
  const hash = getCanonicalHash(store, number);
  if (!hash) return undefined;
  const key = bytesToHex(hash);
  const block = new BlockView({
    hash, number: getBlockNumber(store, hash)!, header: getHeaderBytes(store, hash)!, body: getBodyBytes(store, hash)!,
    receipts: getReceiptsBytes(store, hash), senders: senders.get(key),
  });
  if (!senders.has(key)) senders.set(key, block.senders);
  return block;
}

function result(method: string, params: unknown[]): unknown {
  const number = Number.parseInt(String(params[0]).slice(2), 16);
  const block = view(number);
  if (!block) return null;
  if (method === 'eth_getBlockByNumber') return JSON.parse(renderBlock(block, params[1] === true).toString('utf8'));
  if (method === 'eth_getBlockReceipts') return (blockReceipts(block, schedule) ?? []).map((text) => JSON.parse(text));
  throw new Error(`naive-rpc-server does not serve ${method}`);
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; method: string; params: unknown[] };
    const text = JSON.stringify({ jsonrpc: '2.0', id: request.id, result: result(request.method, request.params) });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});
server.keepAliveTimeout = 60_000;
listenAndAnnounce(server, () => store.close());
