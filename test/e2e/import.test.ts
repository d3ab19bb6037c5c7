import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeChainRlp } from '../../net/eth/chain-rlp.js';
import { hashHeader } from '../../net/eth/header.js';
import { FIXTURES } from '../support/paths.js';
import { removeDir, runCli, startNodeProcess, waitUntil } from '../support/node-process.js';
import { readIoCases } from '../rpc/conformance/io-cases.js';
import { receiptsFromCases } from '../rpc/conformance/receipts-from-cases.js';

const EXEC = join(FIXTURES, 'execution-apis');
const HEAD = '0xd226371d0b1551adb03fb52b71f08e3e11247fe9b1af994768af8cdaa8e7dcd7';

/** The whole-block receipts the conformance responses record (blocks 1 and 54), keyed by block hash. */
function recordedReceipts(): Record<string, unknown[]> {
  const blocks = [...decodeChainRlp(readFileSync(join(EXEC, 'chain.rlp')))];
  const counts = new Map<string, number>(blocks.map((block) => [hashHeader(block.header), block.transactions.length]));
  return receiptsFromCases(readIoCases(EXEC, ['eth_getBlockReceipts']), counts).complete;
}

test('chain-node import loads chain.rlp into a data directory that a node with no live source then serves, and its processors process', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-e2e-import-'));
  try {
    const toml = [
      `data_dir = "${join(dir, 'data')}"`,
      '[[processors]]', 'id = "blobs"', 'kind = "blobs"', 'start_block = 54',
      '[sources.live]', 'kind = "none"', `genesis_file = "${join(EXEC, 'genesis.json')}"`,
      '[finality]', 'kind = "none"',
    ].join('\n');
    writeFileSync(join(dir, 'node.toml'), toml);

    const usage = await runCli(['import', '--config', join(dir, 'node.toml')]);
    assert.equal(usage.code, 2, 'the chain file is required');
    assert.match(usage.stderr, /import takes exactly one chain file/);

    writeFileSync(join(dir, 'receipts.json'), JSON.stringify(recordedReceipts()));
    const imported = await runCli(['import', join(EXEC, 'chain.rlp'), '--config', join(dir, 'node.toml'), '--receipts', join(dir, 'receipts.json')]);
    assert.equal(imported.code, 0, imported.stderr);
    const result = JSON.parse(imported.stdout) as { imported: number; head: { number: number; hash: string }; receipts: { stored: number } };
    assert.equal(result.imported, 55);
    assert.deepEqual(result.head, { number: 54, hash: HEAD });
    assert.equal(result.receipts.stored, 3, 'the genesis and the recorded blocks 1 and 54');
    assert.match(imported.stderr, /^import: 55\/55 blocks written, head 54 0xd226/m);

    const corrupt = join(dir, 'corrupt.rlp');
    writeFileSync(corrupt, Buffer.from([0xf9, 0x02, 0x00, 0x01]));
    const refused = await runCli(['import', corrupt, '--config', join(dir, 'node.toml')]);
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr, 'chain-node: import refused: chain file block #0 (at byte 0): truncated: the block needs 515 bytes, the file has 4 left\n');

    const node = await startNodeProcess({ dir, toml });
    try {
      const status = await (await fetch(`${node.baseUrl}/v1/status`)).json() as { chainId: number; head: { number: number; hash: string } };
      assert.equal(status.chainId, 3503995874084926);
      assert.deepEqual(status.head, { number: 54, hash: HEAD });
      // The blobs processor, started at block 54 (whose receipts were imported), processes the imported block.
      await waitUntil(node, async () => {
        const coverage = await (await fetch(`${node.baseUrl}/v1/processors/blobs/status`)).json() as { coverage?: { processedThrough: number | null } };
        return coverage.coverage?.processedThrough === 54;
      }, 60_000);
      const row = await fetch(`${node.baseUrl}/v1/q/blobs/blocks/54`);
      assert.equal(row.status, 200);
      const body = await row.json() as { blockHash?: string; data?: { blockHash: string } };
      assert.equal(body.data?.blockHash ?? body.blockHash, HEAD);
      const again = await runCli(['import', join(EXEC, 'chain.rlp'), '--config', join(dir, 'node.toml')]);
      assert.equal(again.code, 1, 'the running node holds the data-directory lock');
      assert.match(again.stderr, /is locked by pid \d+ \("node"\)/);
    } finally {
      assert.equal(await node.stop(), 0);
    }
  } finally {
    removeDir(dir);
  }
});
