import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ponderMissing, startPonder } from '../../bench/load/ponder-process.js';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';

// Ponder (a third-party indexer) as an unmodified client of the node's JSON-RPC: it indexes the
// devnet's three tokens' Transfer logs into balances, and they must equal the erc20 kind's state.
const TOKENS = ['0xfa5b17fc3b43b0ecdd27cfa8810a44e52d9a2506', '0xc9bbd8575d55bf87fce6040031aaa9b3b4b90eae', '0x0fcde9daaf8b24c5b8f5b7b990d2489038e205bd'];
const TOML = ['[[processors]]', 'id = "erc20"', 'kind = "erc20"', `tokens = [${TOKENS.map((t) => `"${t}"`).join(', ')}]`, ''].join('\n');

interface BalanceRow { token: string; address: string; balance: string }
interface Coverage { processedThrough: number; complete: boolean; reduceCursor: { number: number } | null }

/** Every erc20 balance of one query-and-follow snapshot, and the block its state reflects. */
async function nodeBalances(node: NodeProcess): Promise<{ balances: Map<string, bigint>; block: number; coverage: Coverage | null }> {
  const balances = new Map<string, bigint>();
  const url = `${node.baseUrl}/v1/processors/erc20/collections/balances/query-and-follow`;
  let body: Record<string, unknown> = { limit: 500 };
  let block = -1;
  let coverage: Coverage | null = null;
  for (;;) {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const page = (await response.json()) as { data: { data: BalanceRow }[]; nextCursor: string | null; coverage: Coverage };
    assert.equal(response.status, 200, JSON.stringify(page));
    if (block < 0) {
      assert.equal(page.coverage.complete, true);
      block = page.coverage.processedThrough;
      coverage = page.coverage;
    }
    for (const { data } of page.data) balances.set(`${data.token}/${data.address}`, BigInt(data.balance));
    if (page.nextCursor === null) return { balances, block, coverage };
    body = { cursor: page.nextCursor, limit: 500 };
  }
}

test('Ponder indexes the devnet tokens from the node\'s JSON-RPC, unmodified, to the same balances as the erc20 kind', {
  skip: ponderMissing() ?? false,
}, async (t) => {
  const node = await startNodeProcess({ toml: TOML, sets: ['devnet.block_time_ms=200', 'devnet.reorg_every=0'], readyTimeoutMs: 120_000 });
  t.after(async () => {
    await node.stop('SIGKILL');
    removeDir(node.dir);
  });
  // Enough blocks for every token to have moved between many holders.
  await waitUntil(node, async () => {
    const status = (await (await fetch(`${node.baseUrl}/v1/status`)).json()) as { head: { number: number } | null };
    return (status.head?.number ?? 0) >= 30;
  }, 120_000);
  const { balances, block, coverage } = await nodeBalances(node);
  assert.ok(balances.size > 20, `${balances.size} balances at block ${block}`);

  // Ponder backfills up to the block it takes as final (30 below latest on this chain id) and follows the rest live,
  // answering /ready after the backfill: startPonder waits for the head to pass the snapshot's block by that much,
  // so /ready means every block through it is indexed.
  const work = mkdtempSync(join(tmpdir(), 'cdn-ponder-'));
  t.after(() => removeDir(work));
  const ponder = await startPonder({ rpcUrl: node.rpcUrl, chainId: 1337, tokens: TOKENS, endBlock: block, databaseDir: join(work, 'pglite'), headTimeoutMs: 120_000 });
  t.after(() => ponder.stop());
  // /ready answers 200 once Ponder has indexed through endBlock.
  await ponder.ready(240_000);
  // The bench's figure comes from these two log lines (bench/workloads/ponder.ts).
  assert.ok(((await ponder.backfillSeconds()) ?? -1) > 0, 'Ponder logged the start and end of its backfill');
  // Ponder's status names the last block it indexed an event or checkpoint of: never past endBlock.
  const status = (await (await fetch(`${ponder.url}/status`)).json()) as { devnet: { block: { number: number } } };
  assert.ok(status.devnet.block.number <= block, `Ponder reports block ${status.devnet.block.number}, endBlock ${block}`);

  const indexed = new Map<string, bigint>();
  let after: string | null = null;
  for (;;) {
    const query = `{ balances(limit: 1000${after ? `, after: "${after}"` : ''}) { items { token holder amount } pageInfo { hasNextPage endCursor } } }`;
    const answer = (await (await fetch(`${ponder.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) })).json()) as {
      data: { balances: { items: { token: string; holder: string; amount: string }[]; pageInfo: { hasNextPage: boolean; endCursor: string } } };
    };
    // The erc20 kind keeps only non-zero balances.
    for (const row of answer.data.balances.items) if (BigInt(row.amount) !== 0n) indexed.set(`${row.token}/${row.holder}`, BigInt(row.amount));
    if (!answer.data.balances.pageInfo.hasNextPage) break;
    after = answer.data.balances.pageInfo.endCursor;
  }
  // On a mismatch, name only the holders that differ (two 54-entry maps hide them in the failure output).
  const differing = [...new Set([...indexed.keys(), ...balances.keys()])].filter((key) => indexed.get(key) !== balances.get(key))
    .map((key) => `${key}: ponder ${indexed.get(key) ?? 'none'}, node ${balances.get(key) ?? 'none'}`);
  assert.deepEqual(differing, [], `Ponder through block ${block} (status block ${status.devnet.block.number}) differs from the erc20 kind (coverage ${JSON.stringify(coverage)})`);
});
