import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { splitBlockRlp } from '../../net/eth/block-parts.js';
import { ChainFileFormatError, createChainFileWriter, readChainFile, type ChainRecord } from '../../bench/ingest/chain-file.js';
import { decodeBlock, encodeBlockBody, encodeHeader, rlpItemLength } from '../../net/eth/index.js';
import { readBytes } from '../net/eth/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'cdn-chain-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function readAll(path: string): Promise<ChainRecord[]> {
  const records: ChainRecord[] = [];
  for await (const record of readChainFile(path)) records.push(record);
  return records;
}

describe('ingest chain file', () => {
  const records: ChainRecord[] = Array.from({ length: 300 }, (_, i) => ({
    block: Uint8Array.from({ length: 1 + ((i * 7919) % 5000) }, (_, j) => (i + j) % 256),
    receipts: Uint8Array.from({ length: 1 + ((i * 104_729) % 9000) }, (_, j) => (i * j) % 256),
  }));

  it('reads back every record in order, across read chunks', async () => {
    const path = join(dir, 'whole.chain');
    const writer = createChainFileWriter(path, `${path}.tmp`);
    for (const record of records) writer.append(record);
    writer.finish();
    assert.deepEqual(await readAll(path), records);
  });

  it('a truncated file or a foreign file is refused, not read short', async () => {
    const path = join(dir, 'whole.chain');
    const truncated = join(dir, 'truncated.chain');
    const bytes = readFileSync(path);
    writeFileSync(truncated, bytes.subarray(0, bytes.length - 10));
    await assert.rejects(readAll(truncated), ChainFileFormatError);
    writeFileSync(truncated, Buffer.from('not a chain file at all'));
    await assert.rejects(readAll(truncated), /not a chain file/);
  });

  it('splitting a block RLP gives its header RLP and its body RLP (every block of both chain.rlp fixtures)', () => {
    let blocks = 0;
    for (const fixture of ['hive-eth-chain/chain.rlp', 'execution-apis/chain.rlp']) {
      const bytes = readBytes(fixture);
      for (let offset = 0; offset < bytes.length; blocks++) {
        const blockRlp = bytes.subarray(offset, offset + rlpItemLength(bytes, offset, fixture));
        const block = decodeBlock(blockRlp);
        const parts = splitBlockRlp(blockRlp);
        assert.deepEqual(parts.header, encodeHeader(block.header));
        assert.deepEqual(parts.body, encodeBlockBody(block));
        offset += blockRlp.length;
      }
    }
    assert.ok(blocks > 2);
  });
});
