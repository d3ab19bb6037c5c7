/**
 * A JSON-RPC proxy on 127.0.0.1 in front of another endpoint, for tests that need an upstream which lies in one
 * controlled way: each request (a call or a batch) is forwarded to `target()` (502 while it is empty), and
 * `rewrite` may change the parsed answers in place, given the calls they answer (paired by id).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RpcCallSeen { readonly id?: unknown; readonly method?: string; readonly params?: unknown[] }
export interface RpcAnswerSeen { id: unknown; result?: unknown }

export interface RpcProxy {
  readonly url: string;
  close(): Promise<void>;
}

export async function startRpcProxy(target: () => string, rewrite: (call: RpcCallSeen, answer: RpcAnswerSeen) => void): Promise<RpcProxy> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => void (async () => {
      const url = target();
      if (url === '') throw new Error('no upstream yet');
      const body = Buffer.concat(chunks).toString('utf8');
      const forwarded = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      let text = await forwarded.text();
      if (forwarded.ok) {
        const calls = new Map(([] as RpcCallSeen[]).concat(JSON.parse(body) as RpcCallSeen | RpcCallSeen[]).map((call) => [JSON.stringify(call.id), call]));
        const answers = JSON.parse(text) as RpcAnswerSeen | RpcAnswerSeen[];
        for (const answer of ([] as RpcAnswerSeen[]).concat(answers)) {
          const call = calls.get(JSON.stringify(answer.id));
          if (call) rewrite(call, answer);
        }
        text = JSON.stringify(answers);
      }
      response.writeHead(forwarded.status, { 'content-type': 'application/json' }).end(text);
    })().catch((error: Error) => response.writeHead(502).end(error.message)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** The calls a history source fetches a block's receipts with: `eth_getBlockReceipts` (json) or `debug_getRawReceipts` (raw). */
export const RECEIPTS_METHODS: readonly string[] = ['eth_getBlockReceipts', 'debug_getRawReceipts'];

/** Whether `call` asks for the receipts of block `block` (by number), in either encoding. */
export function asksReceiptsOf(call: RpcCallSeen, block: number): boolean {
  return RECEIPTS_METHODS.includes(call.method ?? '') && Number(call.params?.[0]) === block;
}

/**
 * Flips the first receipt's status (success ↔ reverted) in a receipts answer of either encoding, so the receipts no
 * longer match the header's receipts root: a JSON receipt's `status`, or the status item of a consensus-encoded
 * receipt (`type? || rlp([status, cumulativeGasUsed, bloom, logs])`, whose list is always long: 0xf8+ prefix).
 */
export function flipFirstReceiptStatus(answer: RpcAnswerSeen): void {
  const receipts = answer.result as Array<{ status: string } | string>;
  const first = receipts[0]!;
  if (typeof first !== 'string') {
    first.status = first.status === '0x1' ? '0x0' : '0x1';
    return;
  }
  const bytes = Buffer.from(first.slice(2), 'hex');
  const listAt = bytes[0]! < 0x80 ? 1 : 0;
  const status = listAt + 1 + (bytes[listAt]! - 0xf7);
  bytes[status] = bytes[status] === 0x01 ? 0x80 : 0x01;
  receipts[0] = `0x${bytes.toString('hex')}`;
}
