/**
 * How an rpc history source asks for blocks (`encoding`), against node:http upstreams started here that serve two
 * real mainnet blocks (fixtures) in both encodings, or refuse the raw getters the ways providers do: `auto` takes raw
 * where they are served and json where they answer a JSON-RPC error or a client error status; a rate limit decides
 * nothing (the batch fails and the next one asks again); `raw` and `json` ask only their own methods. The material
 * is the same bytes whichever way it came.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { BlockView } from '../../../api/rpc/block-view.js';
import { renderBlock } from '../../../api/rpc/render-block.js';
import { blockReceipts } from '../../../api/rpc/render-receipt.js';
import { MAINNET_SCHEDULE } from '../../../net/eth/fork-schedule.js';
import { keccak256 } from '../../../net/eth/keccak.js';
import { HistoryBlockError } from '../../../net/history/history-block.js';
import { createRpcHistory } from '../../../net/history/rpc-history.js';
import { mainnetBlocks } from '../eth/fixtures.js';
import { rawBlockHex, rawReceiptsHex } from './raw-answers.js';

const FROM = 22431083;
const fixtures = mainnetBlocks().filter((f) => f.number === FROM || f.number === FROM + 1);

/** Each block's four answers, as result JSON. */
const answers = new Map(fixtures.map((f) => {
  const view = new BlockView({ hash: keccak256(f.header), number: f.number, header: f.header, body: f.body, receipts: f.receipts });
  return [f.number, {
    eth_getBlockByNumber: renderBlock(view, true).toString(),
    eth_getBlockReceipts: `[${blockReceipts(view, MAINNET_SCHEDULE)!.join(',')}]`,
    debug_getRawBlock: JSON.stringify(rawBlockHex(f.header, f.body)),
    debug_getRawReceipts: JSON.stringify(rawReceiptsHex(f.receipts)),
  } as Record<string, string>];
}));

type RawRefusal = 'none' | 'rpc-error' | 'http-400' | 'http-429';

/** An upstream serving the fixtures; `refuse` says how it answers a batch holding a raw getter. */
async function upstream(refuse: RawRefusal): Promise<{ url: string; methods: string[]; server: Server }> {
  const methods: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const calls = [].concat(JSON.parse(Buffer.concat(chunks).toString('utf8'))) as Array<{ id: number; method: string; params: unknown[] }>;
      methods.push(...calls.map((c) => c.method));
      const raw = calls.some((c) => c.method.startsWith('debug_'));
      if (raw && refuse === 'http-400') return void response.writeHead(400, { 'content-type': 'text/plain' }).end('debug namespace disabled');
      if (raw && refuse === 'http-429') return void response.writeHead(429, { 'content-type': 'text/plain' }).end('slow down');
      const parts = calls.map((c) => {
        if (raw && refuse === 'rpc-error') return `{"jsonrpc":"2.0","id":${c.id},"error":{"code":-32601,"message":"the method ${c.method} does not exist/is not available"}}`;
        const result = answers.get(Number(c.params[0]))?.[c.method] ?? 'null';
        return `{"jsonrpc":"2.0","id":${c.id},"result":${result}}`;
      });
      response.writeHead(200, { 'content-type': 'application/json' }).end(`[${parts.join(',')}]`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, methods, server };
}

const servers: Server[] = [];
after(() => { for (const server of servers) server.close(); });

async function source(refuse: RawRefusal, encoding: 'auto' | 'raw' | 'json') {
  const up = await upstream(refuse);
  servers.push(up.server);
  const history = createRpcHistory({
    url: up.url, concurrency: 2, batchBlocks: 2, timeoutMs: 10_000, maxRetries: 0, backoffInitialMs: 10, backoffMaxMs: 10, pooledBlobRoots: false, encoding,
  });
  return { history, methods: up.methods };
}

describe('an rpc history source\'s block encoding', () => {
  it('auto takes raw where the upstream serves the raw getters, and the material equals the json path\'s', async () => {
    const raw = await source('none', 'auto');
    const viaRaw = await raw.history.fetchRange(FROM, FROM + 1);
    assert.equal(await raw.history.encodingFor(FROM), 'raw');
    assert.ok(!raw.methods.some((m) => m.startsWith('eth_')), raw.methods.join());
    const json = await source('none', 'json');
    const viaJson = await json.history.fetchRange(FROM, FROM + 1);
    assert.ok(!json.methods.some((m) => m.startsWith('debug_')), json.methods.join());
    assert.deepEqual(viaRaw.map((b) => b.hash), viaJson.map((b) => b.hash));
    for (const [i, block] of viaRaw.entries()) {
      for (const part of ['header', 'body', 'receipts'] as const) assert.deepEqual(Buffer.from(block.material[part]!), Buffer.from(viaJson[i]!.material[part]!), `${block.number} ${part}`);
    }
    assert.deepEqual(Buffer.from(viaRaw[0]!.material.receipts!), Buffer.from(fixtures[0]!.receipts));
  });

  it('auto takes json where the raw getters answer a JSON-RPC error or a client error status', async () => {
    for (const refuse of ['rpc-error', 'http-400'] as const) {
      const { history, methods } = await source(refuse, 'auto');
      const blocks = await history.fetchRange(FROM, FROM + 1);
      assert.deepEqual(blocks.map((b) => b.number), [FROM, FROM + 1]);
      assert.equal(await history.encodingFor(FROM), 'json', refuse);
      assert.deepEqual(methods.filter((m) => m.startsWith('debug_')), ['debug_getRawBlock', 'debug_getRawReceipts'], `${refuse}: asked once`);
    }
  });

  it('a rate limit on the raw getters decides nothing: the batch fails naming its blocks, and the next asks again', async () => {
    const { history, methods } = await source('http-429', 'auto');
    await assert.rejects(history.fetchRange(FROM, FROM + 1), (error: unknown) => error instanceof HistoryBlockError && /HTTP 429/.test(error.message));
    await assert.rejects(history.fetchRange(FROM, FROM + 1), HistoryBlockError);
    assert.equal(methods.filter((m) => m === 'debug_getRawBlock').length, 2);
  });

  it('encoding = raw asks only the raw getters, and an upstream without them fails the batch naming the block', async () => {
    const { history, methods } = await source('rpc-error', 'raw');
    await assert.rejects(history.fetchRange(FROM, FROM + 1), (error: unknown) => error instanceof HistoryBlockError && error.blockNumber === FROM && /debug_getRaw/.test(error.message));
    assert.ok(!methods.some((m) => m.startsWith('eth_')), methods.join());
  });
});
