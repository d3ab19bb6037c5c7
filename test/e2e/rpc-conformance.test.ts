/**
 * Conformance against ethereum/execution-apis (`../shared/fixtures/execution-apis/`): the conformance chain is
 * imported with `chain-node import` (its genesis.json; receipts built from the recorded responses that cover whole
 * blocks, verified by the import against each receiptsRoot), a real node is started on it with no live source, and
 * every `.io` case of the methods this node serves is replayed against its JSON-RPC HTTP listener and compared with
 * the recorded `<<` response (deep equality of the parsed JSON; `// speconly` cases by shape).
 *
 * Cases the fixtures cannot support are skipped with the reason, never silently: receipt and log cases whose blocks
 * have no recorded receipts (the chain file has none; the node then answers an error, which is checked — receipts
 * are never invented), and the state methods (`eth_call`, `eth_getBalance`: the node executes nothing; the error
 * it answers instead of a value is checked).
 */
import { after, before, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeChainRlp } from '../../net/eth/chain-rlp.js';
import { hashHeader } from '../../net/eth/header.js';
import { FIXTURES } from '../support/paths.js';
import { freePort } from '../support/ports.js';
import { removeDir, runCli, startNodeProcess, type NodeProcess } from '../support/node-process.js';
import { readIoCases, shapeDifference, type IoCase, type IoExchange } from '../rpc/conformance/io-cases.js';
import { receiptsFromCases } from '../rpc/conformance/receipts-from-cases.js';

const EXEC = join(FIXTURES, 'execution-apis');
/** The methods issue 5 names as served. */
const SERVED = [
  'eth_blockNumber', 'eth_chainId', 'eth_getBlockByNumber', 'eth_getBlockByHash', 'eth_getBlockReceipts', 'eth_getTransactionReceipt',
  'eth_blobBaseFee', 'eth_syncing', 'eth_config', 'eth_getLogs',
];
/** State methods: the node executes nothing, so it must answer an error (never null or zero). */
const STATE_METHODS = ['eth_call', 'eth_getBalance'];

const blocks = [...decodeChainRlp(readFileSync(join(EXEC, 'chain.rlp')))];
const head = blocks.at(-1)!.header.number;
const transactionCounts = new Map<string, number>(blocks.map((block) => [hashHeader(block.header), block.transactions.length]));
const numberByHash = new Map<string, number>(blocks.map((block) => [hashHeader(block.header), block.header.number]));
const cases = readIoCases(EXEC);
const recorded = receiptsFromCases(cases, transactionCounts);
/** Block number → whether the node holds its receipts after the import (recorded whole, or no transactions). */
const hasReceipts = new Map<number, boolean>([[0, true], ...blocks.map((block): [number, boolean] => {
  const hash = hashHeader(block.header);
  return [block.header.number, block.transactions.length === 0 || recorded.complete[hash] !== undefined];
})]);

function blockOf(tag: unknown): number | undefined {
  if (tag === undefined || tag === 'latest' || tag === 'safe' || tag === 'finalized') return head;
  if (tag === 'earliest') return 0;
  if (typeof tag === 'string' && /^0x[0-9a-f]+$/i.test(tag)) return Number(BigInt(tag));
  return undefined;
}

/** Blocks whose receipts an exchange's recorded answer depends on, and lacks; empty when the fixtures support it. */
function missingReceipts(exchange: IoExchange): number[] {
  const { request, response } = exchange;
  if (response.error !== undefined || response.result === null) return [];
  const needed: number[] = [];
  if (request.method === 'eth_getTransactionReceipt' || request.method === 'eth_getBlockReceipts') {
    const result = response.result as { blockHash?: string } | readonly { blockHash?: string }[];
    const first = Array.isArray(result) ? result[0] : result;
    if (first?.blockHash) needed.push(numberByHash.get(first.blockHash)!);
  }
  if (request.method === 'eth_getLogs') {
    const filter = (request.params as [Record<string, unknown>])[0];
    if (typeof filter.blockHash === 'string') needed.push(numberByHash.get(filter.blockHash) ?? -1);
    else {
      const from = blockOf(filter.fromBlock) ?? 0;
      const to = Math.min(blockOf(filter.toBlock) ?? head, head);
      for (let n = from; n <= to; n++) needed.push(n);
    }
  }
  return needed.filter((n) => hasReceipts.get(n) !== true);
}

describe('execution-apis conformance over the JSON-RPC HTTP listener', () => {
  let dir = '';
  let node: NodeProcess | null = null;
  let rpcUrl = '';

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cdn-conformance-'));
    const toml = [
      'processors = []',
      '[sources.live]', 'kind = "none"', `genesis_file = "${join(EXEC, 'genesis.json')}"`,
      '[finality]', 'kind = "none"',
    ].join('\n');
    writeFileSync(join(dir, 'node.toml'), `data_dir = "${join(dir, 'data')}"\n${toml}`);
    writeFileSync(join(dir, 'receipts.json'), JSON.stringify(recorded.complete));
    const imported = await runCli(['import', join(EXEC, 'chain.rlp'), '--config', join(dir, 'node.toml'), '--receipts', join(dir, 'receipts.json')]);
    assert.equal(imported.code, 0, imported.stderr);
    const summary = JSON.parse(imported.stdout) as { imported: number; receipts: { stored: number } };
    assert.equal(summary.imported, 55);
    assert.equal(summary.receipts.stored, 1 + Object.keys(recorded.complete).length, 'the genesis and every wholly recorded block');
    const port = await freePort();
    rpcUrl = `http://127.0.0.1:${port}`;
    node = await startNodeProcess({ dir, toml, sets: [`listeners.rpc_http=127.0.0.1:${port}`] });
  });

  after(async () => {
    if (node) assert.equal(await node.stop(), 0);
    if (dir) removeDir(dir);
  });

  async function call(request: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
    return { status: response.status, body: await response.json() as Record<string, unknown> };
  }

  function check(t: TestContext, ioCase: IoCase, exchange: IoExchange, actual: Record<string, unknown>): void {
    if (ioCase.specOnly) {
      const difference = shapeDifference(exchange.response, actual);
      assert.equal(difference, null, `${ioCase.name}: ${difference}`);
      t.diagnostic('speconly: compared by shape');
      return;
    }
    assert.deepEqual(actual, exchange.response, `${ioCase.name}: ${ioCase.description}`);
  }

  for (const ioCase of cases.filter((c) => SERVED.includes(c.method))) {
    it(`${ioCase.name}: ${ioCase.description}`, async (t) => {
      for (const exchange of ioCase.exchanges) {
        const missing = missingReceipts(exchange);
        const { status, body } = await call(exchange.request);
        assert.equal(status, 200);
        if (missing.length > 0) {
          assert.ok(body.error !== undefined && body.result === undefined, `${ioCase.name}: without the receipts of blocks ${missing.join(', ')} the node must answer an error, got ${JSON.stringify(body).slice(0, 200)}`);
          t.skip(`the fixtures record no receipts for block${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (the chain file has none, and the recorded responses do not cover ${missing.length > 1 ? 'those blocks' : 'that block'} whole); the node answered ${JSON.stringify(body.error)} instead of inventing them`);
          return;
        }
        check(t, ioCase, exchange, body);
      }
    });
  }

  for (const ioCase of cases.filter((c) => STATE_METHODS.includes(c.method))) {
    it(`${ioCase.name}: ${ioCase.description}`, async (t) => {
      for (const exchange of ioCase.exchanges) {
        const { status, body } = await call(exchange.request);
        assert.equal(status, 200);
        const error = body.error as { code: number; data?: { code?: string } } | undefined;
        assert.ok(error !== undefined && body.result === undefined, `${ioCase.name}: a state method must answer an error, got ${JSON.stringify(body).slice(0, 200)}`);
        assert.equal(error.data?.code, 'unsupported_capability');
        t.skip(`state method: the node executes no EVM and keeps no state, so the recorded value cannot be served; it answered ${JSON.stringify(error)}`);
      }
    });
  }

  it('eth_config reports the fork id 0xe272ecbe for the conformance chain at its head (BPO2)', async () => {
    const { body } = await call({ jsonrpc: '2.0', id: 7, method: 'eth_config' });
    const result = body.result as { current: { forkId: string; activationTime: number } };
    assert.equal(result.current.forkId, '0xe272ecbe');
    assert.equal(result.current.activationTime, 540);
  });

  it('every fixture folder is replayed: none is left out unnoticed', () => {
    const folders = new Set(cases.map((c) => c.method));
    assert.deepEqual([...folders].filter((folder) => !SERVED.includes(folder) && !STATE_METHODS.includes(folder)), []);
  });
});
