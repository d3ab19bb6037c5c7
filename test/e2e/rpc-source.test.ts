import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parseGwei, stringToHex, toBlobs } from 'viem';
import { startAnvil, ANVIL_CHAIN_ID } from '../support/anvil.js';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { clients, loadKzg } from '../net/rpc/wallet.js';

/** anvil --hardfork prague: every fork through Prague active at genesis. */
const ANVIL_GENESIS = {
  config: {
    chainId: ANVIL_CHAIN_ID, homesteadBlock: 0, eip150Block: 0, eip155Block: 0, eip158Block: 0, byzantiumBlock: 0, constantinopleBlock: 0,
    petersburgBlock: 0, istanbulBlock: 0, berlinBlock: 0, londonBlock: 0, mergeNetsplitBlock: 0, terminalTotalDifficulty: 0,
    shanghaiTime: 0, cancunTime: 0, pragueTime: 0,
    blobSchedule: { cancun: { target: 3, max: 6, baseFeeUpdateFraction: 3338477 }, prague: { target: 6, max: 9, baseFeeUpdateFraction: 5007716 } },
  },
  nonce: '0x0', timestamp: '0x0', extraData: '0x', gasLimit: '0x1c9c380', difficulty: '0x0', alloc: {},
};

interface Envelope { operation: string; kind: string; block: { number: number; hash: string }; data: { block?: { blockNumber: number; blobCount: number }; transactions?: Array<{ txHash: string }> } | null }

async function changes(node: NodeProcess): Promise<Envelope[]> {
  const page = await (await fetch(`${node.baseUrl}/v1/processors/blobs/changes?limit=1000`)).json() as { data: Envelope[] };
  return page.data;
}

test('the node follows an upstream node (anvil): blob and ordinary transactions are processed, and a reorg is undone and replaced', async (t) => {
  const anvil = await startAnvil();
  t.after(() => anvil.stop());
  const dir = mkdtempSync(join(tmpdir(), 'cdn-rpc-e2e-'));
  writeFileSync(join(dir, 'anvil-genesis.json'), JSON.stringify(ANVIL_GENESIS));
  const node = await startNodeProcess({
    dir,
    sets: [
      'sources.live.kind=rpc', `sources.live.url=${anvil.url}`, 'sources.live.genesis_file=anvil-genesis.json', 'sources.live.poll_interval_ms=100',
      'sources.live.pooled_blob_roots=true', 'finality.kind=rpc', 'finality.poll_interval_ms=200',
    ],
  });
  t.after(async () => { await node.stop(); removeDir(dir); });

  const kzg = await loadKzg();
  const { wallet, account } = clients(anvil);
  const fees = { maxFeePerGas: parseGwei('30'), maxPriorityFeePerGas: parseGwei('1') };
  let nonce = 0;
  await anvil.rpc('evm_setAutomine', [false]);
  const ordinary = await wallet.sendTransaction({ to: account.address, value: 1n, gas: 21_000n, ...fees, nonce: nonce++ });
  const blob = await wallet.sendTransaction({ to: account.address, blobs: toBlobs({ data: stringToHex('chain data node e2e') }), kzg, maxFeePerBlobGas: parseGwei('30'), gas: 50_000n, ...fees, nonce: nonce++ });
  await anvil.mine(1);
  const receipt = await anvil.rpc<{ blockNumber: string }>('eth_getTransactionReceipt', [blob]);
  const blobBlock = Number(BigInt(receipt.blockNumber));
  assert.ok(ordinary);

  await waitUntil(node, async () => (await fetch(`${node.baseUrl}/v1/q/blobs/blocks/${blobBlock}`)).status === 200, 60_000);
  const row = await (await fetch(`${node.baseUrl}/v1/q/blobs/blocks/${blobBlock}`)).json() as { blobCount: number; transactionCount: number; blobGasUsed: string };
  assert.equal(row.blobCount, 1);
  assert.equal(row.transactionCount, 2);
  assert.equal(row.blobGasUsed, '131072');
  const txs = await (await fetch(`${node.baseUrl}/v1/q/blobs/transactions/${blob}`)).json() as { txHash: string; blobCount: number };
  assert.equal(txs.txHash, blob);

  await anvil.mine(2);
  await anvil.rpc('anvil_reorg', [3, []]);
  await waitUntil(node, async () => (await changes(node)).some((c) => c.operation === 'undo' && c.block.number === blobBlock), 60_000);
  const log = await changes(node);
  const undo = log.find((c) => c.operation === 'undo' && c.block.number === blobBlock)!;
  assert.equal(undo.data!.block!.blobCount, 1, 'the undo carries the previous block');
  assert.deepEqual(undo.data!.transactions!.map((tx) => tx.txHash), [blob], 'and its blob transaction');
  await waitUntil(node, async () => (await changes(node)).slice(log.indexOf(undo)).some((c) => c.operation === 'apply' && c.kind === 'blobs.block.put' && c.block.number === blobBlock), 60_000);
  const replaced = await (await fetch(`${node.baseUrl}/v1/q/blobs/blocks/${blobBlock}`)).json() as { blobCount: number; blockHash: string };
  assert.equal(replaced.blobCount, 0, 'the replacement block (anvil_reorg without transactions) is served');
  assert.notEqual(replaced.blockHash, undo.block.hash);
});
