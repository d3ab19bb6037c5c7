import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { cachedChain } from '../../bench/ingest/chain-cache.js';
import { writeCycledChain } from '../../bench/ingest/chain-cycle.js';
import { readChainFile, type ChainRecord } from '../../bench/ingest/chain-file.js';
import { historyChain } from '../../bench/load/history-chain.js';
import { headerLinkFailure } from '../../actors/import/header-link.js';
import { splitBlockRlp } from '../../net/eth/block-parts.js';
import { decodeHeader, keccak256Hex, verifyBlockMaterialBytes, type BlockHeader, type Hash } from '../../net/eth/index.js';
import { devnetForkSchedule, devnetGenesis } from '../../net/devnet/index.js';

const dir = mkdtempSync(join(tmpdir(), 'cdn-chain-cycle-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function readAll(path: string): Promise<ChainRecord[]> {
  const records: ChainRecord[] = [];
  for await (const record of readChainFile(path)) records.push(record);
  return records;
}

test('a cycled chain: the generated blocks first, then their bodies again under headers that link, keep the fee rules and head verifiable blocks', async () => {
  const base = await cachedChain(historyChain('smoke'));
  const path = join(dir, 'cycled.chain');
  const blocks = base.blocks * 2 + 5;
  await writeCycledChain(base, blocks, path);
  const source = await readAll(base.path);
  const cycled = await readAll(path);
  assert.equal(cycled.length, blocks);
  assert.deepEqual(cycled.slice(0, base.blocks), source, 'the generated blocks come first, byte for byte');
  const schedule = devnetForkSchedule(base.config);
  const genesis = devnetGenesis(base.config);
  let parent: BlockHeader = genesis.header;
  let parentHash: Hash = genesis.hash;
  for (const [index, record] of cycled.entries()) {
    const parts = splitBlockRlp(record.block);
    const header = decodeHeader(parts.header);
    assert.equal(header.number, index + 1);
    assert.equal(header.parentHash, parentHash, `block ${header.number} links to its parent`);
    assert.equal(headerLinkFailure(schedule, header, parent), null, `block ${header.number} keeps the header rules`);
    // Transactions, uncles, withdrawals and receipts roots and the bloom: verified as the node verifies fetched material.
    const verified = verifyBlockMaterialBytes({ header: parts.header, body: parts.body, receipts: record.receipts });
    assert.equal(verified.hash, keccak256Hex(parts.header));
    const sourceParts = splitBlockRlp(source[index % base.blocks]!.block);
    assert.deepEqual(parts.body, sourceParts.body, 'the body repeats the source block\'s');
    assert.deepEqual(record.receipts, source[index % base.blocks]!.receipts);
    parent = header;
    parentHash = verified.hash;
  }
  assert.notEqual(keccak256Hex(splitBlockRlp(cycled[base.blocks]!.block).header), keccak256Hex(splitBlockRlp(source[0]!.block).header), 'a repeated body is a new block');
});
