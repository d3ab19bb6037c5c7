/**
 * The JSON-RPC upstream of the p2p workload's `rpc` baseline, in its own process like the serving peers
 * (`p2p-peers.ts`): `node p2p-rpc-upstream.js <smoke 0|1>` loads the same bench chain, renders every block with the
 * node's own JSON-RPC renderers (api/rpc: `eth_getBlockByHash|Number` with full transactions or hashes only,
 * `eth_getBlockReceipts`), listens on 127.0.0.1 (node:http) and prints `{"url":…}` on one line. The answers are
 * rendered before the measured pass, as the peers serve stored bytes: the serving figure is the HTTP and JSON-RPC
 * envelope's cost, not sender recovery or rendering (which take a while: it is started once per workload run). Then,
 * on standard input: `start` marks the CPU counter, `report` prints `{"cpuUs":…}` (user + system microseconds since
 * `start`), `stop` prints the same and exits.
 *
 * Serves single calls and batches of `eth_getBlockByNumber [tag|"latest", full]`, `eth_getBlockByHash [hash, full]`
 * and `eth_getBlockReceipts [hash|tag]`; `latest` is the chain's tip. Anything else is answered with a JSON-RPC error.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { BlockView } from '../../api/rpc/block-view.js';
import { renderBlock } from '../../api/rpc/render-block.js';
import { blockReceipts } from '../../api/rpc/render-receipt.js';
import { hexToBytes } from '../../net/eth/hex.js';
import { loadChain } from '../workloads/p2p-chain.js';

interface Rendered {
  readonly full: string;
  readonly hashes: string;
  readonly receipts: string;
}

const smoke = process.argv[2] === '1';
const { chain, blocks } = await loadChain(smoke);
const byNumber: Rendered[] = [];
const byHash = new Map<string, Rendered>();
for (const block of blocks) {
  const view = new BlockView({ hash: hexToBytes(block.hash, 32), number: block.number, header: block.header, body: block.body, receipts: block.receipts });
  const rendered: Rendered = {
    full: renderBlock(view, true).toString('utf8'), hashes: renderBlock(view, false).toString('utf8'),
    receipts: `[${(blockReceipts(view, chain.schedule) ?? []).join(',')}]`,
  };
  byNumber.push(rendered);
  byHash.set(block.hash, rendered);
}
const tip = byNumber.length - 1;

interface Call { readonly id?: unknown; readonly method?: unknown; readonly params?: unknown }

function blockOf(selector: unknown): Rendered | undefined {
  if (selector === 'latest' || selector === 'finalized' || selector === 'safe') return byNumber[tip];
  if (typeof selector !== 'string') return undefined;
  if (selector.length === 66) return byHash.get(selector.toLowerCase());
  const number = Number.parseInt(selector.slice(2), 16);
  return Number.isSafeInteger(number) ? byNumber[number] : undefined;
}

function answer(call: Call): string {
  const id = JSON.stringify(call.id ?? null);
  const params = Array.isArray(call.params) ? call.params : [];
  let result: string | undefined;
  if (call.method === 'eth_getBlockByNumber' || call.method === 'eth_getBlockByHash') {
    const block = blockOf(params[0]);
    result = block === undefined ? 'null' : params[1] === true ? block.full : block.hashes;
  } else if (call.method === 'eth_getBlockReceipts') {
    result = blockOf(params[0])?.receipts ?? 'null';
  } else if (call.method === 'eth_chainId') {
    result = JSON.stringify(`0x${chain.chainId.toString(16)}`);
  }
  if (result === undefined) return `{"jsonrpc":"2.0","id":${id},"error":{"code":-32601,"message":"the bench upstream does not serve ${String(call.method)}"}}`;
  return `{"jsonrpc":"2.0","id":${id},"result":${result}}`;
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let reply: string;
    try {
      const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Call | Call[];
      reply = Array.isArray(request) ? `[${request.map(answer).join(',')}]` : answer(request);
    } catch {
      reply = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}';
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
    res.end(reply);
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', 512, resolve));
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
let mark = process.cpuUsage();
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'start') mark = process.cpuUsage();
  if (line === 'report') {
    const used = process.cpuUsage(mark);
    process.stdout.write(`${JSON.stringify({ cpuUs: used.user + used.system })}\n`);
  }
  if (line === 'stop') {
    const used = process.cpuUsage(mark);
    server.closeAllConnections();
    server.close();
    process.stdout.write(`${JSON.stringify({ cpuUs: used.user + used.system })}\n`, () => process.exit(0));
    break;
  }
}
