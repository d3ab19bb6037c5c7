/**
 * A mainnet JSON-RPC upstream for e2e tests over real mainnet blocks (the Era1 fixture's, rendered by the node's own
 * JSON-RPC renderers): what the live rpc source, the chain spec and an rpc history source ask. `expiredBelow` makes
 * it a node with expired history (EIP-4444): blocks 1 to expiredBelow − 1 are answered with geth's error for pruned
 * history (code 4444), genesis still served.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BlockView } from '../../api/rpc/block-view.js';
import { renderBlock } from '../../api/rpc/render-block.js';
import { blockReceipts } from '../../api/rpc/render-receipt.js';
import { MAINNET_SCHEDULE } from '../../net/eth/fork-schedule.js';
import type { HistoryBlock } from '../../net/history/history-block.js';

interface RpcRequest { id: unknown; method: string; params: unknown[] }

/** A mainnet JSON-RPC upstream over `blocks` (0..head, head also finalized, moved by `setHead`): what the live rpc source and the chain spec ask. */
export async function serveMainnet(blocks: readonly HistoryBlock[], initialHead: number, expiredBelow = 0) {
  /** Full blocks (eth_getBlockByNumber with transactions) the upstream answered, by number. */
  const served = new Set<number>();
  let head = initialHead;
  const byHash = new Map(blocks.map((block) => [block.hash, block]));
  const view = (block: HistoryBlock) => new BlockView({ hash: block.material.hash, number: block.number, header: block.material.header, body: block.material.body, receipts: block.material.receipts ?? undefined });
  const find = (id: unknown): HistoryBlock | undefined => {
    if (typeof id !== 'string') return undefined;
    if (id.length === 66) return byHash.get(id as `0x${string}`);
    const number = id === 'latest' || id === 'finalized' || id === 'safe' ? head : id === 'earliest' ? 0 : Number(BigInt(id));
    return number <= head ? blocks[number] : undefined;
  };
  const expired = (block: HistoryBlock | undefined) => block !== undefined && block.number > 0 && block.number < expiredBelow;
  const prunedError = (request: RpcRequest) => `{"jsonrpc":"2.0","id":${JSON.stringify(request.id)},"error":{"code":4444,"message":"pruned history unavailable"}}`;
  const answer = (request: RpcRequest): string => {
    const result = (value: string) => `{"jsonrpc":"2.0","id":${JSON.stringify(request.id)},"result":${value}}`;
    switch (request.method) {
      case 'eth_chainId': return result('"0x1"');
      case 'eth_blockNumber': return result(`"0x${head.toString(16)}"`);
      case 'eth_getBlockByNumber':
      case 'eth_getBlockByHash': {
        const block = find(request.params[0]);
        if (expired(block)) return prunedError(request);
        if (block && request.params[1] === true) served.add(block.number);
        return result(block ? renderBlock(view(block), request.params[1] === true).toString() : 'null');
      }
      case 'eth_getBlockReceipts': {
        const block = find(request.params[0]);
        if (expired(block)) return prunedError(request);
        return result(block ? `[${blockReceipts(view(block), MAINNET_SCHEDULE)!.join(',')}]` : 'null');
      }
      default: return `{"jsonrpc":"2.0","id":${JSON.stringify(request.id)},"error":{"code":-32601,"message":"the method ${request.method} does not exist/is not available"}}`;
    }
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RpcRequest | RpcRequest[];
      const text = Array.isArray(body) ? `[${body.map(answer).join(',')}]` : answer(body);
      response.writeHead(200, { 'content-type': 'application/json' }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    setHead: (number: number) => { head = number; },
    served,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

